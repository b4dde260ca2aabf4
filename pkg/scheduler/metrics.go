package scheduler

import (
	"time"

	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the scheduler's Prometheus metrics, served on GET /metrics:
// what Mesos offered and what was launched and killed, how the instances
// stand, how long launches wait to run, and how long the store and Mesos
// take. The driver records them; the core stays free of them (its Output
// says what happened).
type Metrics struct {
	instances     *prometheus.GaugeVec
	rollouts      prometheus.Gauge
	offers        *prometheus.CounterVec
	launches      prometheus.Counter
	kills         prometheus.Counter
	statusUpdates *prometheus.CounterVec
	toRunning     prometheus.Histogram
	ackLatency    prometheus.Histogram
	storeWrites   prometheus.Histogram
	mesosCalls    *prometheus.HistogramVec
	launchBudget  prometheus.Gauge
	steps         prometheus.Histogram

	// counted is when the instance gauges were last counted: counting
	// walks every instance, so it happens at most once per countEvery.
	counted time.Time
}

// countEvery bounds how often the instance gauges are counted.
const countEvery = time.Second

// latencyBuckets span a millisecond to two minutes.
var latencyBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120}

// NewMetrics makes the scheduler's metrics and registers them with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		instances: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "bcs_scheduler_instances",
			Help: "Instances by phase: Pending (waiting for a place), Launched (staging, starting), Running, Killing, Failed, Finished."}, []string{"phase"}),
		rollouts: prometheus.NewGauge(prometheus.GaugeOpts{Name: "bcs_scheduler_rollouts_in_progress",
			Help: "Applications whose rollout has not finished (updating, paused or waiting)."}),
		offers: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "bcs_scheduler_offers_total",
			Help: "Offers by what became of them: received, accepted, declined, rescinded."}, []string{"result"}),
		launches: prometheus.NewCounter(prometheus.CounterOpts{Name: "bcs_scheduler_launches_total",
			Help: "Task groups launched (LAUNCH_GROUP operations sent)."}),
		kills: prometheus.NewCounter(prometheus.CounterOpts{Name: "bcs_scheduler_kills_total",
			Help: "Tasks the scheduler asked Mesos to kill (KILL calls, retries included)."}),
		statusUpdates: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "bcs_scheduler_status_updates_total",
			Help: "Task status updates received, by state."}, []string{"state"}),
		toRunning: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "bcs_scheduler_time_to_running_seconds",
			Help:    "From an instance wanted (created, scaled up, restarted, moved) to all its tasks running.",
			Buckets: latencyBuckets}),
		ackLatency: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "bcs_scheduler_status_ack_seconds",
			Help:    "From a status update's arrival to its acknowledgement, the store written in between.",
			Buckets: latencyBuckets}),
		storeWrites: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "bcs_scheduler_store_write_seconds",
			Help:    "Duration of each etcd transaction persisting a step: a batch of the scheduler's own records (up to 127 writes), or one write that reads first.",
			Buckets: latencyBuckets}),
		mesosCalls: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "bcs_scheduler_mesos_call_seconds",
			Help:    "Duration of calls to the Mesos master, by call type.",
			Buckets: latencyBuckets}, []string{"type"}),
		launchBudget: prometheus.NewGauge(prometheus.GaugeOpts{Name: "bcs_scheduler_launch_budget",
			Help: "How many launches and in-place updates may be under way (sent, not yet running or not yet reporting the new revision): adapted to how fast status updates are acknowledged, at most the engine's maxLaunching."}),
		steps: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "bcs_scheduler_step_seconds",
			Help:    "Duration of each step of the scheduler's loop: the core's work on one input (a gathering of status updates or offers, an application's change, a tick), its writes stored after.",
			Buckets: latencyBuckets}),
	}
	reg.MustRegister(m.instances, m.rollouts, m.offers, m.launches, m.kills, m.statusUpdates,
		m.toRunning, m.ackLatency, m.storeWrites, m.mesosCalls, m.launchBudget, m.steps)
	return m
}

// input counts what arrives from Mesos.
func (m *Metrics) input(in Input) {
	switch in := in.(type) {
	case OffersIn:
		m.offers.WithLabelValues("received").Add(float64(len(in.Offers)))
	case Rescind:
		m.offers.WithLabelValues("rescinded").Inc()
	case StatusUpdates:
		for _, st := range in.Statuses {
			m.statusUpdates.WithLabelValues(st.GetState().String()).Inc()
		}
	}
}

// output counts what a step decided.
func (m *Metrics) output(out Output) {
	for _, call := range out.Calls {
		switch call.GetType() {
		case scheduler.Call_ACCEPT:
			m.offers.WithLabelValues("accepted").Add(float64(len(call.GetAccept().GetOfferIDs())))
			for _, op := range call.GetAccept().GetOperations() {
				if op.GetLaunchGroup() != nil {
					m.launches.Inc()
				}
			}
		case scheduler.Call_DECLINE:
			m.offers.WithLabelValues("declined").Add(float64(len(call.GetDecline().GetOfferIDs())))
		case scheduler.Call_KILL:
			m.kills.Inc()
		}
	}
	for _, waited := range out.Running {
		m.toRunning.Observe(waited.Seconds())
	}
}

// count sets the instance gauges from the core, at most once per
// countEvery.
func (m *Metrics) count(c *Core, now time.Time) {
	if now.Sub(m.counted) < countEvery {
		return
	}
	m.counted = now
	counts := c.Counts()
	for _, phase := range phases {
		m.instances.WithLabelValues(phase.String()).Set(float64(counts.Instances[phase]))
	}
	m.rollouts.Set(float64(counts.RolloutsInProgress))
}

func (m *Metrics) storeWrite(d time.Duration) { m.storeWrites.Observe(d.Seconds()) }

func (m *Metrics) stepped(d time.Duration) { m.steps.Observe(d.Seconds()) }

func (m *Metrics) mesosCall(t scheduler.Call_Type, d time.Duration) {
	m.mesosCalls.WithLabelValues(t.String()).Observe(d.Seconds())
}

func (m *Metrics) acknowledged(d time.Duration) { m.ackLatency.Observe(d.Seconds()) }

package mesosoperator

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	gogotypes "github.com/gogo/protobuf/types"
	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/encoding"
	"github.com/mesos/mesos-go/api/v1/lib/master"
	"github.com/mesos/mesos-go/api/v1/lib/master/calls"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/mesoswire"
)

// DefaultTimeout bounds one call when the caller's context has no
// earlier deadline.
const DefaultTimeout = 30 * time.Second

// maxErrorBody is how much of an error response's text is kept.
const maxErrorBody = 4 << 10

// Client calls one master's operator API. It is safe for concurrent use.
type Client struct {
	endpoint string // may carry credentials (user:password@)
	shown    string // the endpoint without them, for messages
	codec    encoding.Codec
	http     *http.Client
}

// Option changes a Client.
type Option func(*Client)

// WithCodec picks the media type: mesoswire.Protobuf (the default) or
// mesoswire.JSON.
func WithCodec(c encoding.Codec) Option { return func(cl *Client) { cl.codec = c } }

// WithHTTPClient replaces the HTTP client (transport, TLS, credentials);
// the default has DefaultTimeout.
func WithHTTPClient(h *http.Client) Option { return func(cl *Client) { cl.http = h } }

// New returns a client of the master at masterURL ("http://host:5050").
func New(masterURL string, opts ...Option) (*Client, error) {
	u, err := url.Parse(masterURL)
	if err != nil {
		// Not echoed: it may hold credentials.
		return nil, fmt.Errorf("master URL is not a URL: %w", errdefs.ErrInvalidArgument)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("master URL %q: want http://host:port or https://host:port: %w", u.Redacted(), errdefs.ErrInvalidArgument)
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/api/v1"
	c := &Client{
		endpoint: u.String(),
		shown:    u.Redacted(),
		codec:    mesoswire.Protobuf,
		http:     &http.Client{Timeout: DefaultTimeout},
	}
	for _, o := range opts {
		o(c)
	}
	if c.codec.Name != mesoswire.NameProtobuf && c.codec.Name != mesoswire.NameJSON {
		return nil, fmt.Errorf("codec %q: want %s or %s: %w", c.codec.Name, mesoswire.NameProtobuf, mesoswire.NameJSON, errdefs.ErrInvalidArgument)
	}
	return c, nil
}

// Endpoint is the URL the client posts to, without credentials.
func (c *Client) Endpoint() string { return c.shown }

// GetAgents lists the agents the master knows: those registered with it
// and, after a master failover, those it recovered from its registry
// that have not reregistered yet (Recovered). An agent it does not list
// is gone as far as this master is concerned.
func (c *Client) GetAgents(ctx context.Context) ([]Agent, error) {
	resp, err := c.call(ctx, calls.GetAgents(), master.Response_GET_AGENTS)
	if err != nil {
		return nil, err
	}
	got := resp.GetGetAgents()
	agents := make([]Agent, 0, len(got.GetAgents())+len(got.GetRecoveredAgents()))
	for _, a := range got.GetAgents() {
		agents = append(agents, agentOf(a))
	}
	for _, info := range got.GetRecoveredAgents() {
		agents = append(agents, recoveredAgentOf(info))
	}
	return agents, nil
}

// NoMaxGracePeriod, as DrainAgent's maxGracePeriod, leaves every task its
// own kill policy.
const NoMaxGracePeriod time.Duration = -1

// DrainAgent starts draining an agent: the master stops offering it and
// has it kill every task, each task's kill policy grace period capped by
// maxGracePeriod (0 kills at once; NoMaxGracePeriod caps nothing). The
// agent is DRAINED once every task is terminal and acknowledged, and
// stays deactivated until ReactivateAgent; with markGone it is removed
// for good instead and its tasks end TASK_GONE_BY_OPERATOR.
func (c *Client) DrainAgent(ctx context.Context, agentID string, maxGracePeriod time.Duration, markGone bool) error {
	if err := checkAgentID(master.Call_DRAIN_AGENT, agentID); err != nil {
		return err
	}
	if maxGracePeriod < 0 && maxGracePeriod != NoMaxGracePeriod {
		return fmt.Errorf("mesos operator %s: max_grace_period %v is negative (NoMaxGracePeriod caps nothing): %w", master.Call_DRAIN_AGENT, maxGracePeriod, errdefs.ErrInvalidArgument)
	}
	call := calls.DrainAgent(mesos.AgentID{Value: agentID}, func(d *master.Call_DrainAgent) {
		if maxGracePeriod != NoMaxGracePeriod {
			d.MaxGracePeriod = gogotypes.DurationProto(maxGracePeriod)
		}
		d.MarkGone = &markGone
	})
	_, err := c.call(ctx, call, master.Response_UNKNOWN)
	return err
}

// DeactivateAgent stops offers for an agent; its tasks keep running.
func (c *Client) DeactivateAgent(ctx context.Context, agentID string) error {
	if err := checkAgentID(master.Call_DEACTIVATE_AGENT, agentID); err != nil {
		return err
	}
	_, err := c.call(ctx, calls.DeactivateAgent(mesos.AgentID{Value: agentID}), master.Response_UNKNOWN)
	return err
}

// ReactivateAgent offers a deactivated or drained agent again; the
// master refuses while the agent is still draining.
func (c *Client) ReactivateAgent(ctx context.Context, agentID string) error {
	if err := checkAgentID(master.Call_REACTIVATE_AGENT, agentID); err != nil {
		return err
	}
	_, err := c.call(ctx, calls.ReactivateAgent(mesos.AgentID{Value: agentID}), master.Response_UNKNOWN)
	return err
}

// GetMaintenanceStatus returns the machines in maintenance: those
// DRAINING (in the schedule) with the frameworks' answers to their
// inverse offers, and those DOWN.
func (c *Client) GetMaintenanceStatus(ctx context.Context) (MaintenanceStatus, error) {
	resp, err := c.call(ctx, calls.GetMaintenanceStatus(), master.Response_GET_MAINTENANCE_STATUS)
	if err != nil {
		return MaintenanceStatus{}, err
	}
	return maintenanceStatusOf(resp.GetGetMaintenanceStatus().Status), nil
}

func checkAgentID(call master.Call_Type, agentID string) error {
	if agentID == "" {
		return fmt.Errorf("mesos operator %s: agent_id must not be empty: %w", call, errdefs.ErrInvalidArgument)
	}
	return nil
}

// call posts one call. want is the type of response it answers with;
// UNKNOWN for a call answered by 200 and no body.
func (c *Client) call(ctx context.Context, call *master.Call, want master.Response_Type) (*master.Response, error) {
	fail := func(class error, format string, args ...any) error {
		return fmt.Errorf("mesos operator %s at %s: %s: %w", call.Type, c.shown, fmt.Sprintf(format, args...), class)
	}
	var body bytes.Buffer
	if err := c.codec.NewEncoder(encoding.SinkWriter(&body)).Encode(call); err != nil {
		return nil, fail(errdefs.ErrInvalidArgument, "encode: %v", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(body.Bytes()))
	if err != nil {
		return nil, fail(errdefs.ErrInvalidArgument, "%v", err)
	}
	req.Header.Set("Content-Type", c.codec.Type.ContentType())
	req.Header.Set("Accept", c.codec.Type.ContentType())
	res, err := c.http.Do(req)
	if err != nil {
		return nil, fail(errdefs.ErrUnavailable, "%v", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		text, _ := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
		return nil, fail(classOf(res.StatusCode), "%s: %s", res.Status, strings.TrimSpace(string(text)))
	}
	if want == master.Response_UNKNOWN {
		_, _ = io.Copy(io.Discard, res.Body)
		return nil, nil
	}
	if mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type")); mt != c.codec.Type.ContentType() {
		return nil, fail(errdefs.ErrUnavailable, "response of type %q, want %s", res.Header.Get("Content-Type"), c.codec.Type)
	}
	var resp master.Response
	if err := c.codec.NewDecoder(encoding.SourceReader(res.Body)).Decode(&resp); err != nil {
		var de *mesoswire.DecodeError
		if errors.As(err, &de) {
			err = de.Err
		}
		return nil, fail(errdefs.ErrUnavailable, "decode the response: %v", err)
	}
	if resp.Type != want {
		return nil, fail(errdefs.ErrUnavailable, "response of type %s, want %s", resp.Type, want)
	}
	return &resp, nil
}

// classOf maps the master's HTTP status to an error class.
func classOf(status int) error {
	switch status {
	case http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotImplemented:
		return errdefs.ErrInvalidArgument
	case http.StatusConflict:
		return errdefs.ErrConflict
	}
	return errdefs.ErrUnavailable
}

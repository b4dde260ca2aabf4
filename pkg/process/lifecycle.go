package process

// lifecycle is where a process task is, as its own code sees it: the
// reported taskstate tells the scheduler; this tells the task's own
// goroutines (launch, monitor, health checks, kill, restart) what to
// expect. One table says which moves are legal.
type lifecycle int

const (
	lifeNew       lifecycle = iota // not launched yet
	lifeLaunching                  // preparing and starting the command
	lifeRunning                    // an instance runs and is followed: its death is a failure
	lifeStopping                   // a kill, a restart or a death is handled: deaths are expected
	lifeDone                       // the terminal state is reported; nothing runs
)

var lifecycleMoves = map[lifecycle][]lifecycle{
	lifeNew:       {lifeLaunching, lifeStopping, lifeDone},
	lifeLaunching: {lifeRunning, lifeStopping, lifeDone},
	lifeRunning:   {lifeStopping, lifeDone},
	lifeStopping:  {lifeStopping, lifeRunning, lifeDone}, // running again after a restart
}

// advance moves the task to to when that move is legal and reports
// whether it did. Caller holds t.mu.
func (t *task) advance(to lifecycle) bool {
	for _, next := range lifecycleMoves[t.life] {
		if next == to {
			t.life = to
			return true
		}
	}
	return false
}

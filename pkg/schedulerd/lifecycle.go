package schedulerd

import (
	"context"
	"errors"
	"fmt"
)

// A component is one part of the process. Its start brings it up, or
// fails having left nothing of it running; the stop it returns (nil:
// nothing to stop) takes it down again.
type component struct {
	name  string
	start func(ctx context.Context) (stop func() error, err error)
}

// lifecycle starts components in the order given, each after those it
// depends on, and stops them in the reverse order: the last started, which
// may use all the others, stops first.
type lifecycle struct {
	started []startedComponent
}

type startedComponent struct {
	name string
	stop func() error
}

// start starts each component in turn. When one fails, those already
// started stop, in reverse, and its error is returned as it is (with the
// errors of those stops, if any).
func (l *lifecycle) start(ctx context.Context, components ...component) error {
	for _, c := range components {
		stop, err := c.start(ctx)
		if err != nil {
			if stopErr := l.stop(); stopErr != nil {
				return errors.Join(err, stopErr)
			}
			return err
		}
		l.started = append(l.started, startedComponent{c.name, stop})
	}
	return nil
}

// stop stops the started components, the last started first, each once,
// and returns their errors joined.
func (l *lifecycle) stop() error {
	var errs []error
	for i := len(l.started) - 1; i >= 0; i-- {
		c := l.started[i]
		if c.stop == nil {
			continue
		}
		if err := c.stop(); err != nil {
			errs = append(errs, fmt.Errorf("stopping %s: %w", c.name, err))
		}
	}
	l.started = nil
	return errors.Join(errs...)
}

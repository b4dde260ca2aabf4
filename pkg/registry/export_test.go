package registry

import "context"

// Missing is how many stored task groups the mirror lacks or holds at an
// older revision now.
func (m *TaskGroupMirror) Missing(ctx context.Context) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, missing, err := m.matchKeys(ctx)
	return len(missing), err
}

// StopFollowing stops the mirror's watch, as a failed one does, keeping
// what it holds.
func (m *TaskGroupMirror) StopFollowing() {
	<-m.loaded
	m.stop()
	<-m.done
}

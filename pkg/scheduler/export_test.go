package scheduler

// Waiting counts the callers of Driver.Message waiting for an answer.
func (d *Driver) Waiting() int {
	d.waitersMu.Lock()
	defer d.waitersMu.Unlock()
	return len(d.waiters)
}

package executor

import (
	"fmt"
	"os"
)

// PrivateSandbox makes the executor's Mesos sandbox dir its own alone
// (0700) before anything is written there. Mesos creates it 0755, owned
// by FrameworkInfo.user; what the executors keep in it — the tasks'
// output, fetched configmap items, pod state — is no other user's to
// read, and the tasks run as their namespaces' users.
func PrivateSandbox(dir string) error {
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	return nil
}

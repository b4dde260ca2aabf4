package remotefile_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/egress"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/remotefile"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// ftpServer runs Debian's pure-ftpd on 127.0.0.1 with one virtual user,
// testUser, whose home holds conf (its own user database, no anonymous
// login, nothing of the host's configuration touched) and returns its
// address.
func ftpServer(t *testing.T) string {
	t.Helper()
	for _, bin := range []string{"/usr/sbin/pure-ftpd", "/usr/bin/pure-pw"} {
		if _, err := os.Stat(bin); err != nil {
			t.Fatalf("%s is missing: run scripts/test-deps (installs pure-ftpd)", bin)
		}
	}
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	// The server runs the session as nobody: it must reach the home.
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(home, "conf"), []byte("port=8080\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "users.pdb")
	add := exec.Command("/usr/bin/pure-pw", "useradd", testUser, "-f", filepath.Join(dir, "users"), "-F", db,
		"-u", "65534", "-g", "65534", "-d", home, "-m")
	add.Stdin = strings.NewReader(testPassword + "\n" + testPassword + "\n")
	if out, err := add.CombinedOutput(); err != nil {
		t.Fatalf("pure-pw useradd: %v: %s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	srv := exec.Command("/usr/sbin/pure-ftpd", "-l", "puredb:"+db, "-S", strings.Replace(addr, ":", ",", 1),
		"-P", "127.0.0.1", "-p", "40000:49999", "-E", "-A", "-H")
	srv.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-srv.Process.Pid, syscall.SIGKILL)
		srv.Wait()
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			line, _ := bufio.NewReader(conn).ReadString('\n')
			conn.Close()
			if strings.HasPrefix(line, "220") {
				return addr
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("pure-ftpd does not answer on %s: %v", addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestFetchFTP checks the ftp type of seed 000's configmap items against
// a real FTP server: the user's login, a wrong password, a missing file
// and no credentials at all (anonymous, which this server refuses) each
// give the file or an error naming the item and the URL, never the
// password.
func TestFetchFTP(t *testing.T) {
	addr := ftpServer(t)
	f := &remotefile.Fetcher{Timeout: 20 * time.Second} // pure-ftpd delays its answer to a failed login
	ctx := context.Background()
	url := fmt.Sprintf("ftp://%s/conf", addr)

	got, err := f.Fetch(ctx, item(url), nil)
	if err != nil || string(got) != "port=8080\n" {
		t.Fatalf("Fetch = %q, %v; want the file", got, err)
	}

	wrong, anonymous := item(url), item(url)
	wrong.Password = "wrong-Pw"
	anonymous.User, anonymous.Password = "", ""
	tests := []struct {
		name string
		item proto.RemoteItem
		want string
	}{
		{"wrong password", wrong, "ftp login to " + url + ": 530 "},
		{"anonymous", anonymous, "ftp login to " + url + ": "},
		{"missing file", item(url + ".missing"), "ftp RETR " + url + ".missing: 550 "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.Fetch(ctx, tt.item, nil)
			if err == nil {
				t.Fatal("Fetch succeeded")
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, source+": "+tt.want) || !errors.Is(err, errdefs.ErrUnavailable) {
				t.Errorf("error %q: want it to start with %q", msg, source+": "+tt.want)
			}
			if strings.Contains(msg, testPassword) || strings.Contains(msg, "wrong-Pw") {
				t.Errorf("error %q shows the password", msg)
			}
		})
	}
}

// FTP's data connections are checked as its control connection is: a
// policy that allows the server's control port only lets the login
// through and refuses the RETR's data connection (pure-ftpd's passive
// ports are others); allowing the server's address lets both through.
func TestFetchFTPChecksDataConnections(t *testing.T) {
	addr := ftpServer(t)
	f := &remotefile.Fetcher{Timeout: 20 * time.Second}
	url := fmt.Sprintf("ftp://%s/conf", addr)
	policy := func(allowed string) *egress.Policy {
		p, err := egress.Compile("namespace nsa", &proto.Egress{Refused: egress.Networks(), Allowed: []string{allowed}})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	_, err := f.Fetch(context.Background(), item(url), policy(addr))
	want := source + ": ftp RETR " + url + ": egress to 127.0.0.1:"
	if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), " refused: loopback (egress policy of namespace nsa)") ||
		!errors.Is(err, errdefs.ErrPermissionDenied) {
		t.Errorf("Fetch: %v, want %q… refused: loopback", err, want)
	}
	got, err := f.Fetch(context.Background(), item(url), policy("127.0.0.1"))
	if err != nil || string(got) != "port=8080\n" {
		t.Errorf("allowed: %q, %v", got, err)
	}
}

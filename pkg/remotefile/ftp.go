package remotefile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"

	"github.com/jlaffaye/ftp"

	"github.com/bcs-mesos/bcs-mesos/pkg/egress"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
)

// ftpDefaultPort is where an ftp:// URL without a port points.
const ftpDefaultPort = "21"

// retrFTP reads u's file over FTP, logged in as user (anonymous when
// empty), and hands the body to read. Every connection, control and
// data, is made by dial and ends when ctx does.
func retrFTP(ctx context.Context, u *url.URL, user, password string, dial dialFunc, read func(io.Reader) error) error {
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), ftpDefaultPort)
	}
	connect := func(network, address string) (net.Conn, error) {
		conn, err := dial(ctx, network, address)
		if err != nil {
			return nil, err
		}
		stop := context.AfterFunc(ctx, func() { conn.Close() })
		return &stopConn{Conn: conn, stop: stop}, nil
	}
	failed := func(step string, err error) error {
		if refused := (*egress.RefusedError)(nil); errors.As(err, &refused) {
			return fmt.Errorf("ftp %s %s: %w", step, SafeURL(u.String()), refused)
		}
		if ctx.Err() != nil {
			err = errors.New("timed out")
		}
		return fmt.Errorf("ftp %s %s: %v: %w", step, SafeURL(u.String()), err, errdefs.ErrUnavailable)
	}
	c, err := ftp.Dial(addr, ftp.DialWithDialFunc(connect))
	if err != nil {
		return failed("connect", err)
	}
	defer c.Quit()
	if user == "" {
		user, password = "anonymous", "anonymous"
	}
	if err := c.Login(user, password); err != nil {
		return failed("login to", err)
	}
	body, err := c.Retr(u.Path)
	if err != nil {
		return failed("RETR", err)
	}
	defer body.Close()
	if err := read(body); err != nil {
		if errors.Is(err, errTooBig) {
			return err
		}
		return failed("RETR", err)
	}
	return nil
}

// dialFunc connects as net.Dialer.DialContext does.
type dialFunc func(ctx context.Context, network, address string) (net.Conn, error)

// stopConn stops closing its connection on ctx's end once it is closed.
type stopConn struct {
	net.Conn
	stop func() bool
}

func (c *stopConn) Close() error {
	c.stop()
	err := c.Conn.Close()
	if errors.Is(err, net.ErrClosed) || errors.Is(err, os.ErrClosed) {
		return nil
	}
	return err
}

package remotefile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/bcs-mesos/bcs-mesos/pkg/egress"
	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// Defaults of a Fetcher's limits.
const (
	DefaultTimeout  = time.Minute
	DefaultMaxBytes = 4 << 20
)

// Fetcher fetches a task spec's remote configmap items (proto.RemoteItem).
type Fetcher struct {
	// Client sends the http and https requests; nil is
	// http.DefaultClient. Timeout bounds them in any case.
	Client *http.Client
	// Timeout bounds the fetch of one item, connecting included;
	// 0 is DefaultTimeout.
	Timeout time.Duration
	// MaxBytes is the largest item; 0 is DefaultMaxBytes.
	MaxBytes int64
	// Dir keeps a copy of every item fetched, under the task's name (the
	// executor's sandbox); "" keeps none.
	Dir string
}

// SandboxDir is where in its sandbox an executor keeps the items it
// fetched (Fetcher.Dir).
const SandboxDir = "configmaps"

var errTooBig = errors.New("too big")

// Fetch returns item's content, fetched under policy (nil: none; every
// connection, an FTP data connection and a redirect's too, is checked
// against it). Errors name the item and its URL without credentials, and
// say why: the HTTP status, the FTP server's answer, the egress rule, a
// timeout, the size limit; never what the server sent.
func (f *Fetcher) Fetch(ctx context.Context, item proto.RemoteItem, policy *egress.Policy) ([]byte, error) {
	u, err := parse(item)
	if err != nil {
		return nil, err
	}
	timeout := f.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	limit := f.MaxBytes
	if limit <= 0 {
		limit = DefaultMaxBytes
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var data []byte
	read := func(r io.Reader) error {
		data, err = io.ReadAll(io.LimitReader(r, limit+1))
		if err == nil && int64(len(data)) > limit {
			return fmt.Errorf("%s: %s: %w: more than %d bytes: %w", item.Source, SafeURL(item.URL), errTooBig, limit, errdefs.ErrInvalidArgument)
		}
		return err
	}
	client, dial := f.Client, (&net.Dialer{}).DialContext
	if policy != nil {
		client, dial = policy.Client(egress.ClientOptions{FollowRedirects: true}), policy.DialContext
	}
	switch u.Scheme {
	case "ftp":
		err = retrFTP(ctx, u, item.User, item.Password, dial, read)
	default:
		var resp *http.Response
		resp, err = Get(ctx, client, u, item.User, item.Password, nil)
		if err == nil {
			err = read(resp.Body)
			resp.Body.Close()
			if err != nil && !errors.Is(err, errTooBig) {
				err = fmt.Errorf("GET %s: %s: %w", SafeURL(u.String()), cause(err, u), errdefs.ErrUnavailable)
			}
		}
	}
	if err != nil {
		if errors.Is(err, errTooBig) {
			return nil, err
		}
		return nil, fmt.Errorf("%s: %w", item.Source, err)
	}
	return data, nil
}

// parse checks what can be told before fetching: the URL parses, names
// a host, carries no credentials and its scheme is the item's type.
func parse(item proto.RemoteItem) (*url.URL, error) {
	u, err := url.Parse(item.URL)
	if err != nil {
		return nil, fmt.Errorf("%s: URL %s does not parse: %w", item.Source, SafeURL(item.URL), errdefs.ErrInvalidArgument)
	}
	switch {
	case item.Type != "http" && item.Type != "https" && item.Type != "ftp":
		return nil, fmt.Errorf("%s: type %q cannot be fetched: %w", item.Source, item.Type, errdefs.ErrInvalidArgument)
	case u.Scheme != item.Type:
		return nil, fmt.Errorf("%s: URL %s is not of type %s: %w", item.Source, SafeURL(item.URL), item.Type, errdefs.ErrInvalidArgument)
	case u.Host == "":
		return nil, fmt.Errorf("%s: URL %s names no host: %w", item.Source, SafeURL(item.URL), errdefs.ErrInvalidArgument)
	case u.User != nil:
		return nil, fmt.Errorf("%s: URL %s carries credentials, which go in user and password: %w", item.Source, SafeURL(item.URL), errdefs.ErrInvalidArgument)
	case item.Env == "" && item.File == nil:
		return nil, fmt.Errorf("%s: neither env nor file to inject into: %w", item.Source, errdefs.ErrInvalidArgument)
	}
	return u, nil
}

// Resolve fetches spec's remote items under spec's egress policy and
// returns a copy of spec in which they are ordinary env and files
// entries and Remote is empty; spec itself is unchanged, and returned as
// it is when it has none. Each item is also kept in Dir/<task name>/.
func (f *Fetcher) Resolve(ctx context.Context, spec *proto.TaskSpec) (*proto.TaskSpec, error) {
	if len(spec.Remote) == 0 {
		return spec, nil
	}
	policy, err := Policy(spec)
	if err != nil {
		return nil, err
	}
	out := *spec
	out.Env = append([]proto.EnvVar(nil), spec.Env...)
	out.Files = append([]proto.File(nil), spec.Files...)
	out.Remote = nil
	for i, item := range spec.Remote {
		data, err := f.Fetch(ctx, item, policy)
		if err != nil {
			return nil, err
		}
		if err := f.keep(spec.Name, i, item, data); err != nil {
			return nil, fmt.Errorf("%s: keep a copy in the sandbox: %w", item.Source, err)
		}
		if item.Env != "" {
			out.Env = append(out.Env, proto.EnvVar{Name: item.Env, Value: string(data)})
			continue
		}
		file := *item.File
		file.Content = data
		out.Files = append(out.Files, file)
	}
	return &out, nil
}

// Policy is spec's egress policy, compiled (nil when it carries none:
// a scheduler from before egress policies).
func Policy(spec *proto.TaskSpec) (*egress.Policy, error) {
	if spec.Egress == nil {
		return nil, nil
	}
	return egress.Compile("namespace "+spec.Instance.Namespace, spec.Egress)
}

// ResolveUpdate returns u with its specs resolved (Resolve), so that they
// compare with the specs the tasks run, resolved at launch; u itself is
// unchanged.
func (f *Fetcher) ResolveUpdate(ctx context.Context, u *proto.GroupUpdate) (*proto.GroupUpdate, error) {
	out := *u
	out.Tasks = slices.Clone(u.Tasks)
	for i, tu := range out.Tasks {
		if tu.Spec == nil {
			continue
		}
		spec, err := f.Resolve(ctx, tu.Spec)
		if err != nil {
			return nil, fmt.Errorf("task %q: %w", tu.TaskID, err)
		}
		out.Tasks[i].Spec = spec
	}
	return &out, nil
}

// keep writes item i of task into Dir: "<i>-<the URL's base name>".
func (f *Fetcher) keep(task string, i int, item proto.RemoteItem, data []byte) error {
	if f.Dir == "" {
		return nil
	}
	dir := filepath.Join(f.Dir, filepath.Base("/"+task))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	name := strconv.Itoa(i)
	if u, err := url.Parse(item.URL); err == nil && path.Base(u.Path) != "/" && path.Base(u.Path) != "." {
		name += "-" + path.Base(u.Path)
	}
	tmp, err := os.CreateTemp(dir, ".fetching-")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(dir, name))
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

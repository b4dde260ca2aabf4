package pod

import (
	"archive/tar"
	"bufio"
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	docker "github.com/fsouza/go-dockerclient"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/identity"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// containerUser is who a container runs as (docker's User; "" is its
// image's). With its namespace's identity: the user its "user" parameter
// names, which the namespace's rule must allow; else its image's user
// (none is root) when the rule allows that; else the namespace's uid:gid.
// Without an identity: the parameter's, or the image's.
func containerUser(id *proto.Identity, param, imageUser string) (string, error) {
	if id == nil {
		return param, nil
	}
	rule, err := identity.NewRule(id.Users, id.UID, id.Range)
	if err != nil {
		return "", fmt.Errorf("identity range: %v: %w", err, errdefs.ErrInvalidArgument)
	}
	if param != "" {
		if err := rule.Check(param); err != nil {
			return "", fmt.Errorf("docker parameter user %q: %v (the namespace's admission policy): %w", param, err, errdefs.ErrInvalidArgument)
		}
		return param, nil
	}
	if rule.Check(cmp.Or(imageUser, identity.Root)) == nil {
		return imageUser, nil
	}
	return fmt.Sprintf("%d:%d", id.UID, id.GID), nil
}

// owner is a uid and gid inside a container.
type owner struct{ uid, gid int }

// settle finishes the created, not yet started container id of spec: the
// uid it runs as must be allowed by its namespace's rule (a user name
// means what the image's /etc/passwd says), its pod-private volumes
// become that uid's, and its configmap and secret items are written.
func (p *Pod) settle(ctx context.Context, id string, spec *proto.TaskSpec) error {
	o, err := p.containerOwner(ctx, id)
	if err != nil {
		return err
	}
	if spec.Identity != nil {
		rule, err := identity.NewRule(spec.Identity.Users, spec.Identity.UID, spec.Identity.Range)
		if err == nil {
			err = rule.CheckID(uint32(o.uid), uint32(o.gid))
		}
		if err != nil {
			return fmt.Errorf("container %q runs as uid %d gid %d: %v (the namespace's admission policy): %w", id, o.uid, o.gid, err, errdefs.ErrInvalidArgument)
		}
	}
	for _, v := range spec.Container.Volumes {
		if v.HostPath == "" {
			if err := os.Lchown(privateVolume(v, p.cfg.PodID, p.cfg.SandboxDir), o.uid, o.gid); err != nil {
				return fmt.Errorf("pod volume %q: %w", v.MountPath, err)
			}
		}
	}
	return p.uploadFiles(ctx, id, spec.Files, o)
}

// containerOwner is the uid and gid container id runs as: its User, "" is
// root, a name is looked up in its /etc/passwd (and a group name in its
// /etc/group).
func (p *Pod) containerOwner(ctx context.Context, id string) (owner, error) {
	c, err := p.cfg.Docker.InspectContainerWithOptions(docker.InspectContainerOptions{ID: id, Context: ctx})
	if err != nil {
		return owner{}, fmt.Errorf("inspect container %q: %v: %w", id, err, dockerClass(err))
	}
	user := ""
	if c.Config != nil {
		user = c.Config.User
	}
	o, err := p.resolveOwner(ctx, id, user)
	if err != nil {
		return owner{}, fmt.Errorf("container %q: %w", id, err)
	}
	return o, nil
}

// resolveOwner reads user, "", "name" or "uid", each with an optional
// ":group", inside container id.
func (p *Pod) resolveOwner(ctx context.Context, id, user string) (owner, error) {
	name, group, hasGroup := strings.Cut(user, ":")
	var o owner
	switch uid, err := strconv.Atoi(name); {
	case name == "":
	case err == nil:
		o = owner{uid, uid}
	default:
		ids, ok := numbers(p.readEntries(ctx, id, "/etc/passwd")[name], 2, 3) // name:x:uid:gid:…
		if !ok {
			return owner{}, fmt.Errorf("user %q is neither numeric nor in the image's /etc/passwd: %w", name, errdefs.ErrInvalidArgument)
		}
		o = owner{ids[0], ids[1]}
	}
	if !hasGroup {
		return o, nil
	}
	if gid, err := strconv.Atoi(group); err == nil {
		o.gid = gid
		return o, nil
	}
	ids, ok := numbers(p.readEntries(ctx, id, "/etc/group")[group], 2) // name:x:gid:…
	if !ok {
		return owner{}, fmt.Errorf("group %q is neither numeric nor in the image's /etc/group: %w", group, errdefs.ErrInvalidArgument)
	}
	o.gid = ids[0]
	return o, nil
}

// writeFiles writes configmap/secret items into container id, owned by
// the user it runs as.
func (p *Pod) writeFiles(ctx context.Context, id string, files []proto.File) error {
	if len(files) == 0 {
		return nil
	}
	o, err := p.containerOwner(ctx, id)
	if err != nil {
		return err
	}
	return p.uploadFiles(ctx, id, files, o)
}

// uploadFiles uploads configmap/secret items into container id (docker's
// archive API): mode 0600, 0400 when readOnly, so that only their owner
// reads them; owned by the item's user ("uid[:gid]" or a name of the
// image's) or else by def, whom the container runs as. Missing parent
// directories are created by dockerd.
func (p *Pod) uploadFiles(ctx context.Context, id string, files []proto.File, def owner) error {
	if len(files) == 0 {
		return nil
	}
	if err := checkFiles(files); err != nil {
		return err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	now := time.Now()
	for _, f := range files {
		o := def
		if f.User != "" {
			var err error
			if o, err = p.resolveOwner(ctx, id, f.User); err != nil {
				return fmt.Errorf("file %q: %w", f.Path, err)
			}
		}
		mode := int64(0o600)
		if f.ReadOnly {
			mode = 0o400
		}
		hdr := &tar.Header{
			Name: strings.TrimPrefix(path.Clean(f.Path), "/"), Mode: mode, Size: int64(len(f.Content)),
			Uid: o.uid, Gid: o.gid, ModTime: now, Typeflag: tar.TypeReg,
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := tw.Write(f.Content); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	err := p.cfg.Docker.UploadToContainer(id, docker.UploadToContainerOptions{InputStream: &buf, Path: "/", Context: ctx})
	if err != nil {
		return fmt.Errorf("write files into container %q: %v: %w", id, err, dockerClass(err))
	}
	return nil
}

// readEntries reads a passwd-like file of container id: name → its
// colon-separated fields; an image without the file gives an empty map.
func (p *Pod) readEntries(ctx context.Context, id, file string) map[string][]string {
	out := map[string][]string{}
	var buf bytes.Buffer
	if err := p.cfg.Docker.DownloadFromContainer(id, docker.DownloadFromContainerOptions{
		Path: file, OutputStream: &buf, Context: ctx,
	}); err != nil {
		return out
	}
	tr := tar.NewReader(&buf)
	if _, err := tr.Next(); err != nil {
		return out
	}
	sc := bufio.NewScanner(io.LimitReader(tr, 1<<20))
	for sc.Scan() {
		fields := strings.Split(sc.Text(), ":")
		out[fields[0]] = fields
	}
	return out
}

// numbers reads fields[i] for each i as a number; false when one is
// missing or is not one.
func numbers(fields []string, i ...int) ([]int, bool) {
	out := make([]int, len(i))
	for k, j := range i {
		if j >= len(fields) {
			return nil, false
		}
		n, err := strconv.Atoi(fields[j])
		if err != nil {
			return nil, false
		}
		out[k] = n
	}
	return out, true
}

// checkFiles refuses configmap/secret items whose path is not an absolute
// file path.
func checkFiles(files []proto.File) error {
	for _, f := range files {
		if f.Path == "" || !path.IsAbs(f.Path) || path.Clean(f.Path) == "/" {
			return fmt.Errorf("file path %q is not an absolute file path: %w", f.Path, errdefs.ErrInvalidArgument)
		}
	}
	return nil
}

package pod

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
	"time"

	docker "github.com/fsouza/go-dockerclient"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// writeFiles uploads the configmap/secret items into the created, not yet
// started container (docker's archive API): mode 0644, 0444 when readOnly,
// owned by User (root by default; a name is looked up in the image's
// /etc/passwd, or "uid[:gid]"). Missing parent directories are created by
// dockerd.
func (p *Pod) writeFiles(ctx context.Context, id string, files []proto.File) error {
	if len(files) == 0 {
		return nil
	}
	if err := checkFiles(files); err != nil {
		return err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	var passwd map[string][2]int
	now := time.Now()
	for _, f := range files {
		clean := path.Clean(f.Path)
		uid, gid, err := parseOwner(f.User)
		if err != nil {
			if passwd == nil {
				passwd = p.readPasswd(ctx, id)
			}
			ids, ok := passwd[f.User]
			if !ok {
				return fmt.Errorf("file %q: user %q is neither numeric nor in the image's /etc/passwd: %w", f.Path, f.User, errdefs.ErrInvalidArgument)
			}
			uid, gid = ids[0], ids[1]
		}
		mode := int64(0o644)
		if f.ReadOnly {
			mode = 0o444
		}
		hdr := &tar.Header{
			Name: strings.TrimPrefix(clean, "/"), Mode: mode, Size: int64(len(f.Content)),
			Uid: uid, Gid: gid, ModTime: now, Typeflag: tar.TypeReg,
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

// parseOwner reads "", "root", "uid" or "uid:gid".
func parseOwner(user string) (uid, gid int, err error) {
	if user == "" || user == "root" {
		return 0, 0, nil
	}
	u, g, hasGroup := strings.Cut(user, ":")
	if uid, err = strconv.Atoi(u); err != nil {
		return 0, 0, err
	}
	gid = uid
	if hasGroup {
		if gid, err = strconv.Atoi(g); err != nil {
			return 0, 0, err
		}
	}
	return uid, gid, nil
}

// readPasswd reads name → (uid, gid) from the container's /etc/passwd; an
// image without one gives an empty map.
func (p *Pod) readPasswd(ctx context.Context, id string) map[string][2]int {
	out := map[string][2]int{}
	var buf bytes.Buffer
	if err := p.cfg.Docker.DownloadFromContainer(id, docker.DownloadFromContainerOptions{
		Path: "/etc/passwd", OutputStream: &buf, Context: ctx,
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
		if len(fields) < 4 {
			continue
		}
		uid, err1 := strconv.Atoi(fields[2])
		gid, err2 := strconv.Atoi(fields[3])
		if err1 == nil && err2 == nil {
			out[fields[0]] = [2]int{uid, gid}
		}
	}
	return out
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

package pod

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	docker "github.com/fsouza/go-dockerclient"

	"github.com/bcs-mesos/bcs-mesos/pkg/errdefs"
	"github.com/bcs-mesos/bcs-mesos/pkg/taskstate"
	"github.com/bcs-mesos/bcs-mesos/proto"
)

// hotPatch applies plan to the running containers without restarting any
// (same containers, same processes). First, before any container is
// touched, the changed tasks' images are pulled (per pullPolicy) and their
// new limits checked. Then, task by task in group order: the files the
// new image changed against the image the container's files came from
// are copied in and those it deleted removed (copyImageChanges); cpu and
// memory limits are changed (docker update); the configmap/secret files
// are written and those no longer in the spec removed. Last, each task
// whose files changed (image or configmap/secret) gets the update's
// ReloadSignal, or runs its ReloadCommand (docker exec).
//
// A task whose patch fails keeps its revision (its files may be partly
// new) and the tasks after it are not patched; the others move to the new
// revision, so the same update sent again finishes the job. A failing
// reload does not undo anything: the files are in place, the revision
// moves on, and the error says so.
func (p *Pod) hotPatch(ctx context.Context, plan *UpdatePlan) error {
	type work struct {
		i       int
		imageID string
	}
	var todo []work
	for i, t := range p.tasks {
		if !plan.changed[i] {
			continue
		}
		next := plan.next[i]
		if err := checkFiles(next.Files); err != nil {
			return fmt.Errorf("hot-patch of task %q: %w", t.id, err)
		}
		if err := applyResources(&docker.HostConfig{}, next.Resources); err != nil {
			return fmt.Errorf("hot-patch of task %q: %w", t.id, err)
		}
		if err := p.pull(ctx, next.Container); err != nil {
			return fmt.Errorf("hot-patch of task %q: %w", t.id, err)
		}
		img, err := p.cfg.Docker.InspectImage(next.Container.Image)
		if err != nil {
			return fmt.Errorf("hot-patch of task %q: image %q: %v: %w", t.id, next.Container.Image, err, dockerClass(err))
		}
		todo = append(todo, work{i: i, imageID: img.ID})
	}
	patched := make([]bool, len(p.tasks))
	var reload []*task
	var patchErr error
	for _, w := range todo {
		t := p.tasks[w.i]
		again, err := p.patch(ctx, t, plan.next[w.i], w.imageID)
		if err != nil {
			patchErr = fmt.Errorf("hot-patch of task %q: %w; the task keeps revision %d and may have part of the new files, the tasks after it were not patched "+
				"(send the update again to finish, or use InplaceUpdate)", t.id, err, t.revision)
			break
		}
		patched[w.i] = true
		if again {
			reload = append(reload, t)
		}
	}
	p.mu.Lock()
	for i, t := range p.tasks {
		if (!plan.changed[i] || patched[i]) && t.state != taskstate.Finished {
			t.spec = plan.next[i]
			p.setRevision(t, plan.Revision)
		}
	}
	p.mu.Unlock()
	if patchErr != nil {
		return patchErr
	}
	var errs []error
	for _, t := range reload {
		if err := p.reload(ctx, t, plan.update); err != nil {
			errs = append(errs, fmt.Errorf("reload of task %q: %w", t.id, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("hot-patch to revision %d applied (the new files are in place and every task runs the revision), but %w", plan.Revision, err)
	}
	return nil
}

// patch brings t's running container from its spec to next; imageID is
// next's image. It says whether the container's files changed.
func (p *Pod) patch(ctx context.Context, t *task, next *proto.TaskSpec, imageID string) (filesChanged bool, err error) {
	p.mu.Lock()
	cur, curImage, id := t.spec, t.imageID, t.containerID
	p.mu.Unlock()
	ins, err := p.cfg.Docker.InspectContainerWithOptions(docker.InspectContainerOptions{ID: id, Context: ctx})
	if err != nil || !ins.State.Running {
		return false, fmt.Errorf("container %q is not running: %v: %w", id, err, errdefs.ErrConflict)
	}
	if imageID != curImage {
		if err := p.copyImageChanges(ctx, ins, curImage, imageID); err != nil {
			return false, err
		}
		filesChanged = true
	}
	fields := specChanges(cur, next)
	if slices.ContainsFunc(fields, func(f string) bool { return strings.HasPrefix(f, "resources.") }) {
		if err := p.updateResources(ctx, t, next.Resources); err != nil {
			return filesChanged, err
		}
	}
	if slices.Contains(fields, "files") {
		if err := p.writeFiles(ctx, id, next.Files); err != nil {
			return true, err
		}
		var gone []string
		for _, f := range cur.Files {
			if !slices.ContainsFunc(next.Files, func(n proto.File) bool { return path.Clean(n.Path) == path.Clean(f.Path) }) {
				gone = append(gone, path.Clean(f.Path))
			}
		}
		if err := removeInContainer(ins.State.Pid, gone); err != nil {
			return true, err
		}
		filesChanged = true
	}
	p.mu.Lock()
	t.spec, t.imageID = next, imageID
	p.mu.Unlock()
	return filesChanged, nil
}

// reload tells t's process to pick up its new files: u's ReloadSignal to
// the container's main process, or u's ReloadCommand run in it.
func (p *Pod) reload(ctx context.Context, t *task, u *proto.GroupUpdate) error {
	switch {
	case u.ReloadSignal > 0:
		return p.Signal(ctx, t.id, syscall.Signal(u.ReloadSignal))
	case len(u.ReloadCommand) > 0:
		res, err := p.Exec(ctx, t.id, ExecRequest{Command: u.ReloadCommand})
		if err != nil {
			return err
		}
		if res.ExitCode != 0 {
			return fmt.Errorf("%q exited with %d: %s", u.ReloadCommand, res.ExitCode, strings.TrimSpace(res.Output))
		}
	}
	return nil
}

// copyImageChanges makes the running container c hold newImage's files
// where they differ from oldImage's. Stock Docker cannot swap a running
// container's image, so the two images' root filesystems are read through
// temporary containers that are created, never started, and removed
// (docker's archive API), and compared entry by entry (type, mode, owner,
// size, link target, content digest; not times). Entries the new image
// added or changed are streamed from it into c (docker's archive API
// again, which keeps owners and modes and replaces a directory by a file
// or the reverse); entries it no longer has are removed through the
// container's root (/proc/<pid>/root, symlink-safe with os.Root). Docker's
// own files (/.dockerenv, /etc/hosts, /etc/hostname, /etc/resolv.conf,
// /etc/mtab), /dev, /proc, /sys and c's mounts (volumes) are left alone.
// The images are read three times (two digests of the old, and the new
// again to copy), with no copy on the agent's disk.
func (p *Pod) copyImageChanges(ctx context.Context, c *docker.Container, oldImage, newImage string) error {
	var mounts []string
	for _, m := range c.Mounts {
		mounts = append(mounts, path.Clean(m.Destination))
	}
	skip := func(name string) bool { return dockerOwned(name) || underAny(name, mounts) }
	var snaps [2]string
	defer func() {
		for _, id := range snaps {
			if id != "" {
				_ = p.cfg.Docker.RemoveContainer(docker.RemoveContainerOptions{ID: id, Force: true, RemoveVolumes: true, Context: context.WithoutCancel(ctx)})
			}
		}
	}()
	var manifests [2]manifest
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for k, image := range []string{oldImage, newImage} {
		id, err := p.snapshot(ctx, image)
		if err != nil {
			return err
		}
		snaps[k] = id
		wg.Go(func() { manifests[k], errs[k] = p.readManifest(ctx, id) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	changed, deleted := diffManifests(manifests[0], manifests[1], skip)
	if len(changed) > 0 {
		if err := p.copyEntries(ctx, snaps[1], c.ID, changed); err != nil {
			return err
		}
	}
	return removeInContainer(c.State.Pid, deleted)
}

// dockerOwned tells whether docker, not the image, provides name in a
// container.
func dockerOwned(name string) bool {
	switch name {
	case "/", "/.dockerenv", "/etc/hosts", "/etc/hostname", "/etc/resolv.conf", "/etc/mtab":
		return true
	}
	return underAny(name, []string{"/dev", "/proc", "/sys"})
}

// underAny tells whether name is one of dirs or beneath one.
func underAny(name string, dirs []string) bool {
	for _, d := range dirs {
		if name == d || strings.HasPrefix(name, strings.TrimSuffix(d, "/")+"/") {
			return true
		}
	}
	return false
}

// snapshot creates (never starts) a container of image whose root
// filesystem is the image's, labelled with the pod so that a crashed
// executor's successor removes it.
func (p *Pod) snapshot(ctx context.Context, image string) (string, error) {
	labels := p.cfg.podLabels()
	labels[LabelRole] = "snapshot"
	c, err := p.cfg.Docker.CreateContainer(docker.CreateContainerOptions{
		// The entrypoint never runs; docker wants one to create a container.
		Config:     &docker.Config{Image: image, Entrypoint: []string{"/bcs-hot-patch-snapshot"}, Cmd: []string{}, Labels: labels},
		HostConfig: &docker.HostConfig{NetworkMode: "none"},
		Context:    ctx,
	})
	if err != nil {
		return "", fmt.Errorf("read image %.19s: create a container of it: %v: %w", image, err, dockerClass(err))
	}
	return c.ID, nil
}

// archive streams container id's root filesystem as a tar; closing the
// reader stops the stream.
func (p *Pod) archive(ctx context.Context, id string) io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		err := p.cfg.Docker.DownloadFromContainer(id, docker.DownloadFromContainerOptions{Path: "/", OutputStream: pw, Context: ctx})
		if err != nil {
			err = fmt.Errorf("read the files of container %.12s: %v: %w", id, err, dockerClass(err))
		}
		pw.CloseWithError(err)
	}()
	return pr
}

// entry is what diffManifests compares of one file.
type entry struct {
	typeflag byte
	mode     int64
	uid, gid int
	size     int64
	link     string
	digest   [sha256.Size]byte
}

// manifest is a root filesystem by clean absolute path.
type manifest map[string]entry

func (p *Pod) readManifest(ctx context.Context, id string) (manifest, error) {
	src := p.archive(ctx, id)
	defer src.Close()
	m := manifest{}
	tr := tar.NewReader(src)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return m, nil
		}
		if err != nil {
			return nil, err
		}
		e := entry{typeflag: hdr.Typeflag, mode: hdr.Mode, uid: hdr.Uid, gid: hdr.Gid, size: hdr.Size, link: hdr.Linkname}
		switch hdr.Typeflag {
		case tar.TypeReg:
			h := sha256.New()
			if _, err := io.Copy(h, tr); err != nil {
				return nil, err
			}
			copy(e.digest[:], h.Sum(nil))
		case tar.TypeLink:
			// A hard link changes with the content of its target.
			e.digest = m[entryName(hdr.Linkname)].digest
		}
		m[entryName(hdr.Name)] = e
	}
}

// entryName is the clean absolute path of an archive entry.
func entryName(name string) string { return path.Clean("/" + name) }

// diffManifests returns the paths of entries added or changed from old to
// next, and the topmost paths old has and next has not (a deleted
// directory, not its contents); paths skip accepts are left out.
func diffManifests(old, next manifest, skip func(string) bool) (changed map[string]bool, deleted []string) {
	changed = map[string]bool{}
	for name, e := range next {
		if skip(name) {
			continue
		}
		if o, ok := old[name]; !ok || o != e {
			changed[name] = true
		}
	}
	var gone []string
	for name := range old {
		if _, ok := next[name]; !ok && !skip(name) {
			gone = append(gone, name)
		}
	}
	slices.Sort(gone)
	for _, name := range gone {
		if !underAny(name, deleted) {
			deleted = append(deleted, name)
		}
	}
	return changed, deleted
}

// copyEntries streams the entries of container from's root filesystem
// named in names into container to (docker's archive API extracts them
// at "/").
func (p *Pod) copyEntries(ctx context.Context, from, to string, names map[string]bool) error {
	src := p.archive(ctx, from)
	defer src.Close()
	pr, pw := io.Pipe()
	filtered := make(chan error, 1)
	go func() {
		err := filterArchive(tar.NewReader(src), pw, names)
		pw.CloseWithError(err)
		filtered <- err
	}()
	err := p.cfg.Docker.UploadToContainer(to, docker.UploadToContainerOptions{InputStream: pr, Path: "/", Context: ctx})
	pr.CloseWithError(io.ErrClosedPipe) // the filter stops if the upload did
	if ferr := <-filtered; ferr != nil && !errors.Is(ferr, io.ErrClosedPipe) {
		return fmt.Errorf("copy the new image's files: %w", ferr)
	}
	if err != nil {
		return fmt.Errorf("copy the new image's files into container %.12s: %v: %w", to, err, dockerClass(err))
	}
	return nil
}

// filterArchive writes the entries of tr named in names to w as a tar
// whose names are relative to "/".
func filterArchive(tr *tar.Reader, w io.Writer, names map[string]bool) error {
	tw := tar.NewWriter(w)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return tw.Close()
		}
		if err != nil {
			return err
		}
		if !names[entryName(hdr.Name)] {
			continue
		}
		hdr.Name = strings.TrimPrefix(hdr.Name, "/")
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := io.Copy(tw, tr); err != nil {
			return err
		}
	}
}

// removeInContainer removes the absolute paths names (and what is beneath
// them) in the root filesystem of the container whose main process is
// pid. os.Root keeps every step inside the container's root: a symlink in
// the container cannot lead the removal onto the agent's files.
func removeInContainer(pid int, names []string) error {
	if len(names) == 0 {
		return nil
	}
	root, err := os.OpenRoot("/proc/" + strconv.Itoa(pid) + "/root")
	if err != nil {
		return fmt.Errorf("the container's root filesystem: %v: %w", err, errdefs.ErrUnavailable)
	}
	defer root.Close()
	var errs []error
	for _, name := range names {
		if err := root.RemoveAll(strings.TrimPrefix(name, "/")); err != nil {
			errs = append(errs, fmt.Errorf("remove %s: %v", name, err))
		}
	}
	return errors.Join(errs...)
}

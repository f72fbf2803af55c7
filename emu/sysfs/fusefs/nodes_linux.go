package fusefs

import (
	"context"
	"path"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/cxray/cxray/emu/sysfs"
)

// The tree is built once, when the kernel first talks to the file system,
// and never changes: persistent inodes, no lookups computed on the fly.

type rootNode struct {
	fs.Inode
	entries []sysfs.DeviceEntry
	mtime   time.Time
	// tree: the root is a sysfs root (bus/, class/), not the devices
	// directory.
	tree bool
}

var _ = (fs.NodeOnAdder)((*rootNode)(nil))

func newRoot(entries []sysfs.DeviceEntry, mtime time.Time, tree bool) *rootNode {
	return &rootNode{entries: entries, mtime: mtime, tree: tree}
}

func (r *rootNode) Getattr(ctx context.Context, f fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	setTimes(&out.Attr, r.mtime)
	out.Mode = syscall.S_IFDIR | 0o755
	return 0
}

// Class directories of the tree, by the name of a function's own
// directory for them.
var classDirs = map[string]string{"net": "class/net", "infiniband": "class/infiniband"}

func (r *rootNode) OnAdd(ctx context.Context) {
	devices := &r.Inode
	class := map[string]*fs.Inode{}
	if r.tree {
		devices = r.mkdirs(ctx, &r.Inode, "bus/pci/devices")
		for sub, path := range classDirs {
			class[sub] = r.mkdirs(ctx, &r.Inode, path)
		}
	}
	bridges := map[string]*fs.Inode{}
	for _, e := range r.entries {
		var d *fs.Inode
		// up is how far the function's directory lies below
		// bus/pci/devices.
		up := "../../../../../"
		if u := e.Upstream; u != nil {
			b := bridges[u.BDF]
			if b == nil {
				b = r.mkdir(ctx, devices, u.BDF)
				for _, a := range sysfs.BridgeFiles(u) {
					t := &textNode{data: []byte(a.Content), mtime: r.mtime}
					b.AddChild(a.Name, b.NewPersistentInode(ctx, t, fs.StableAttr{Mode: syscall.S_IFREG}), false)
				}
				r.addAttrs(ctx, b, u.Attrs)
				bridges[u.BDF] = b
			}
			d = r.mkdir(ctx, b, e.BDF)
			r.symlink(ctx, devices, e.BDF, u.BDF+"/"+e.BDF)
			up += "../"
		} else {
			d = r.mkdir(ctx, devices, e.BDF)
		}
		cfg := &configNode{dev: e.Dev, size: e.ConfigSize, mtime: r.mtime}
		d.AddChild("config", d.NewPersistentInode(ctx, cfg, fs.StableAttr{Mode: syscall.S_IFREG}), false)
		for _, a := range sysfs.Attributes(e) {
			t := &textNode{data: []byte(a.Content), mtime: r.mtime}
			d.AddChild(a.Name, d.NewPersistentInode(ctx, t, fs.StableAttr{Mode: syscall.S_IFREG}), false)
		}
		r.addAttrs(ctx, d, e.Attrs)
		for _, sub := range []struct {
			name  string
			items []string
		}{{"net", e.Netdevs}, {"infiniband", e.RDMA}} {
			if len(sub.items) == 0 {
				continue // the kernel has no such directory then either
			}
			sd := r.mkdir(ctx, d, sub.name)
			for _, it := range sub.items {
				if !r.tree {
					r.mkdir(ctx, sd, it)
					continue
				}
				// As on a host, the function's entry and the class entry
				// are one directory: here the class one, linked.
				r.symlink(ctx, sd, it, up+classDirs[sub.name]+"/"+it)
				cd := r.mkdir(ctx, class[sub.name], it)
				r.symlink(ctx, cd, "device", "../../../bus/pci/devices/"+e.BDF)
				r.addAttrs(ctx, cd, e.ClassAttrs[it])
			}
		}
		if e.Driver != "" {
			r.symlink(ctx, d, "driver", "/sys/bus/pci/drivers/"+e.Driver)
		}
		if r.tree && e.Fwctl != nil {
			// As mlx5_fwctl registers it: the class device's parent is
			// the PCI function; the device file is the ioctl endpoint.
			cd := r.mkdirs(ctx, &r.Inode, "class/fwctl/"+e.Fwctl.Name())
			r.symlink(ctx, cd, "device", "../../../bus/pci/devices/"+e.BDF)
			dd := r.mkdirs(ctx, &r.Inode, "dev/fwctl")
			dd.AddChild(e.Fwctl.Name(), dd.NewPersistentInode(ctx, &fwctlNode{dev: e.Fwctl, mtime: r.mtime}, fs.StableAttr{Mode: syscall.S_IFREG}), false)
		}
	}
}

// addAttrs adds attribute files by their paths under dir.
func (r *rootNode) addAttrs(ctx context.Context, dir *fs.Inode, attrs map[string]sysfs.Attr) {
	paths := make([]string, 0, len(attrs))
	for p := range attrs {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		parent := dir
		if i := strings.LastIndexByte(p, '/'); i >= 0 {
			parent = r.mkdirs(ctx, dir, p[:i])
		}
		n := &attrNode{fn: attrs[p], mtime: r.mtime}
		parent.AddChild(path.Base(p), parent.NewPersistentInode(ctx, n, fs.StableAttr{Mode: syscall.S_IFREG}), false)
	}
}

// mkdirs makes (or finds) the directories of a slash-separated path.
func (r *rootNode) mkdirs(ctx context.Context, parent *fs.Inode, p string) *fs.Inode {
	for _, c := range strings.Split(p, "/") {
		if ch := parent.GetChild(c); ch != nil {
			parent = ch
			continue
		}
		parent = r.mkdir(ctx, parent, c)
	}
	return parent
}

func (r *rootNode) symlink(ctx context.Context, parent *fs.Inode, name, target string) {
	l := &fs.MemSymlink{Data: []byte(target)}
	parent.AddChild(name, parent.NewPersistentInode(ctx, l, fs.StableAttr{Mode: syscall.S_IFLNK}), false)
}

func (r *rootNode) mkdir(ctx context.Context, parent *fs.Inode, name string) *fs.Inode {
	n := parent.NewPersistentInode(ctx, &dirNode{mtime: r.mtime}, fs.StableAttr{Mode: syscall.S_IFDIR})
	parent.AddChild(name, n, false)
	return n
}

type dirNode struct {
	fs.Inode
	mtime time.Time
}

func (d *dirNode) Getattr(ctx context.Context, f fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	setTimes(&out.Attr, d.mtime)
	out.Mode = syscall.S_IFDIR | 0o755
	return 0
}

// textNode is a read-only attribute file.
type textNode struct {
	fs.Inode
	data  []byte
	mtime time.Time
}

var (
	_ = (fs.NodeOpener)((*textNode)(nil))
	_ = (fs.NodeReader)((*textNode)(nil))
	_ = (fs.NodeGetattrer)((*textNode)(nil))
)

func (t *textNode) Getattr(ctx context.Context, f fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	setTimes(&out.Attr, t.mtime)
	out.Mode = syscall.S_IFREG | 0o444
	out.Size = uint64(len(t.data))
	return 0
}

func (t *textNode) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	if flags&syscall.O_ACCMODE != syscall.O_RDONLY {
		return nil, 0, syscall.EACCES // sysfs refuses write opens of attributes without a store method
	}
	return nil, fuse.FOPEN_KEEP_CACHE, 0
}

func (t *textNode) Read(ctx context.Context, f fs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if off >= int64(len(t.data)) {
		return fuse.ReadResultData(nil), 0
	}
	return fuse.ReadResultData(t.data[off:min(off+int64(len(dest)), int64(len(t.data)))]), 0
}

// attrNode is an attribute computed when it is opened (a link state, a
// counter). Like sysfs it reports a page as its size; direct I/O makes
// reads end where the text does.
type attrNode struct {
	fs.Inode
	fn    sysfs.Attr
	mtime time.Time
}

var (
	_ = (fs.NodeOpener)((*attrNode)(nil))
	_ = (fs.NodeReader)((*attrNode)(nil))
	_ = (fs.NodeGetattrer)((*attrNode)(nil))
)

// attrHandle holds the text an open of an attrNode read.
type attrHandle struct{ data []byte }

func (a *attrNode) Getattr(ctx context.Context, f fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	setTimes(&out.Attr, a.mtime)
	out.Mode = syscall.S_IFREG | 0o444
	out.Size = 4096
	return 0
}

func (a *attrNode) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	if flags&syscall.O_ACCMODE != syscall.O_RDONLY {
		return nil, 0, syscall.EACCES
	}
	s, err := a.fn()
	if err != nil {
		return nil, 0, syscall.EIO
	}
	return &attrHandle{data: []byte(s)}, fuse.FOPEN_DIRECT_IO, 0
}

func (a *attrNode) Read(ctx context.Context, f fs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	h, ok := f.(*attrHandle)
	if !ok {
		return nil, syscall.EBADF
	}
	if off >= int64(len(h.data)) {
		return fuse.ReadResultData(nil), 0
	}
	return fuse.ReadResultData(h.data[off:min(off+int64(len(dest)), int64(len(h.data)))]), 0
}

// configNode is a function's config space. It is opened with direct I/O:
// the kernel then neither caches nor merges nor reads ahead, and every
// pread/pwrite arrives here as one READ/WRITE at the caller's offset and
// size, so register side effects (the gateway counter, the address/flag
// handshake) happen once per access, as on hardware.
type configNode struct {
	fs.Inode
	dev   sysfs.ConfigSpace
	size  int
	mtime time.Time
}

var (
	_ = (fs.NodeOpener)((*configNode)(nil))
	_ = (fs.NodeReader)((*configNode)(nil))
	_ = (fs.NodeWriter)((*configNode)(nil))
	_ = (fs.NodeGetattrer)((*configNode)(nil))
	_ = (fs.NodeSetattrer)((*configNode)(nil))
	_ = (fs.NodeFsyncer)((*configNode)(nil))
	_ = (fs.NodeFlusher)((*configNode)(nil))
)

func (c *configNode) Getattr(ctx context.Context, f fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	setTimes(&out.Attr, c.mtime)
	out.Mode = syscall.S_IFREG | 0o644
	out.Size = uint64(c.size)
	return 0
}

// Setattr accepts only what open(O_TRUNC) or touch ask for and changes
// nothing: config space has a fixed size.
func (c *configNode) Setattr(ctx context.Context, f fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if sz, ok := in.GetSize(); ok && sz != uint64(c.size) {
		return syscall.EPERM
	}
	return c.Getattr(ctx, f, out)
}

func (c *configNode) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	return nil, fuse.FOPEN_DIRECT_IO, 0
}

func (c *configNode) Read(ctx context.Context, f fs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	n, err := sysfs.ReadConfig(c.dev, c.size, dest, off)
	if err != nil {
		return nil, errno(err)
	}
	return fuse.ReadResultData(dest[:n]), 0
}

func (c *configNode) Write(ctx context.Context, f fs.FileHandle, data []byte, off int64) (uint32, syscall.Errno) {
	n, err := sysfs.WriteConfig(c.dev, c.size, data, off)
	if err != nil {
		return 0, errno(err)
	}
	return uint32(n), 0
}

// Fsync succeeds: writes reach the device before Write returns. (Tools
// open config with O_SYNC; an error here would fail their writes.)
func (c *configNode) Fsync(ctx context.Context, f fs.FileHandle, flags uint32) syscall.Errno {
	return 0
}

func (c *configNode) Flush(ctx context.Context, f fs.FileHandle) syscall.Errno { return 0 }

func errno(err error) syscall.Errno {
	if e, ok := err.(syscall.Errno); ok {
		return e
	}
	return syscall.EIO
}

func setTimes(a *fuse.Attr, t time.Time) {
	a.SetTimes(&t, &t, &t)
}

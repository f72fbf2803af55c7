package fusefs_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cxray/cxray/access/icmd"
	"github.com/cxray/cxray/access/pci"
	"github.com/cxray/cxray/access/regaccess"
	"github.com/cxray/cxray/access/vsec"
	"github.com/cxray/cxray/dev/devname"
	"github.com/cxray/cxray/emu"
	"github.com/cxray/cxray/emu/sysfs"
	"github.com/cxray/cxray/emu/sysfs/fusefs"
)

const (
	bdf     = "0000:03:00.0"
	bdf2    = "0000:81:00.1"
	devices = sysfs.DefaultMountpoint
	regMGIR = 0x9020
)

// access is one ReadAt/WriteAt call seen by the device.
type access struct {
	write bool
	off   int64
	n     int
}

// recorder wraps a config space and logs every call, to show that each
// pread/pwrite on the FUSE file arrives as exactly one call, unchanged.
type recorder struct {
	cs  sysfs.ConfigSpace
	mu  sync.Mutex
	log []access
}

func (r *recorder) ReadAt(p []byte, off int64) (int, error) {
	r.mu.Lock()
	r.log = append(r.log, access{false, off, len(p)})
	r.mu.Unlock()
	return r.cs.ReadAt(p, off)
}

func (r *recorder) WriteAt(p []byte, off int64) (int, error) {
	r.mu.Lock()
	r.log = append(r.log, access{true, off, len(p)})
	r.mu.Unlock()
	return r.cs.WriteAt(p, off)
}

func (r *recorder) take() []access {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := r.log
	r.log = nil
	return l
}

func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = seed + byte(i*7)
	}
	return b
}

// newDevice is an emulated ConnectX-7 whose MGIR holds a known pattern.
func newDevice() (*emu.Device, []byte) {
	fw := emu.NewMapFirmware(map[uint16]int{regMGIR: 160})
	img := pattern(160, 0x11)
	fw.Values[regMGIR] = img
	return emu.New(emu.Config{Firmware: fw}), img
}

func serve(t *testing.T, entries ...sysfs.DeviceEntry) *fusefs.Server {
	t.Helper()
	srv, err := fusefs.Serve(devices, entries, &sysfs.Options{HostNamespace: os.Getenv(envHostNS)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Unmount(); err != nil {
			t.Error(err)
		}
	})
	return srv
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestClientStackThroughFUSE drives cxray's own path, unchanged, over the
// FUSE `config` file: the sysfs file backend with the mstflint lock file,
// the gateway, ICMD and access registers.
func TestClientStackThroughFUSE(t *testing.T) {
	if !inPrivateNS(t) {
		return
	}
	dev, img := newDevice()
	dev2, _ := newDevice()
	srv := serve(t,
		sysfs.DeviceEntry{BDF: bdf2, Dev: dev2, NUMANode: 1},
		sysfs.DeviceEntry{BDF: "03:00.0", Dev: dev, NUMANode: 0, Netdevs: []string{"eth2"}, RDMA: []string{"mlx5_0"}, Driver: "mlx5_core"},
	)

	ents, err := os.ReadDir(devices)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if want := []string{bdf, bdf2}; !slices.Equal(names, want) {
		t.Fatalf("%s lists %v, want only the emulated %v (the host's devices must be hidden)", devices, names, want)
	}

	cfg, err := pci.OpenConfig(filepath.Join(devices, bdf, "config"))
	if err != nil {
		t.Fatal(err)
	}
	defer cfg.Close()
	lock, err := pci.OpenLock(pci.LockDir, bdf)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	gw, err := vsec.Open(pci.WithLock(cfg, lock, time.Second), nil)
	if err != nil {
		t.Fatal(err)
	}
	ic, err := icmd.Open(ctxT(t), gw, nil)
	if err != nil {
		t.Fatal(err)
	}
	rc := regaccess.New(ic)
	got, err := rc.Access(ctxT(t), regaccess.Get, regMGIR, make([]byte, 160))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, img) {
		t.Fatalf("MGIR through FUSE:\n got % x\nwant % x", got, img)
	}
	// The client keeps the ICMD semaphore between commands until Close.
	if err := ic.Close(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if s := dev.State(); s.GatewaySemaphore != 0 || s.ICMDSemaphore != 0 || s.ICMDBusy {
		t.Errorf("device left busy: %+v", s)
	}

	// cxray's discovery sees the emulated functions the way it sees real ones.
	fns, err := devname.Default.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(fns) != 2 || fns[0].BDF != bdf || fns[0].DeviceName != "ConnectX-7" || fns[0].Driver != "mlx5_core" ||
		!slices.Equal(fns[0].Netdevs, []string{"eth2"}) || !slices.Equal(fns[0].RDMA, []string{"mlx5_0"}) || fns[1].NUMANode != 1 {
		t.Errorf("devname.List() = %+v", fns)
	}

	// Unmounting brings the real directory back.
	if err := srv.Unmount(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(devices, bdf2)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after Unmount, %s still shows %s (%v)", devices, bdf2, err)
	}
}

// TestConfigByteExact shows that reads and writes of every size at any
// offset reach the device once, with the caller's offset and size, and
// return what a direct ReadAt returns.
func TestConfigByteExact(t *testing.T) {
	if !inPrivateNS(t) {
		return
	}
	dev, _ := newDevice()
	rec := &recorder{cs: dev}
	serve(t, sysfs.DeviceEntry{BDF: bdf, Dev: rec})
	path := filepath.Join(devices, bdf, "config")

	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() != emu.ConfigSize || st.Mode().Perm() != 0o644 {
		t.Errorf("config: size %d mode %v, want %d and 0644", st.Size(), st.Mode(), emu.ConfigSize)
	}
	f, err := os.OpenFile(path, os.O_RDWR|unix.O_SYNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fd := int(f.Fd())
	rec.take()

	// Offsets outside the gateway (0xC0..0xD7), whose reads have side
	// effects, so a second direct read must agree.
	offsets := []int64{0, 1, 2, 3, 5, 7, 0x2c, 0x33, 0x34, 0x3d, 0x40, 0x61, 0x9f, 0xd8, 0xdb, 0x101, 0x7ff, 0xfbf, 0xff0}
	for _, size := range []int{1, 2, 4, 8, 64} {
		for _, off := range offsets {
			if off < 0xd8 && off+int64(size) > emu.GatewayOffset || off+int64(size) > emu.ConfigSize {
				continue
			}
			buf := make([]byte, size)
			n, err := unix.Pread(fd, buf, off)
			if err != nil || n != size {
				t.Fatalf("pread %d at 0x%x: %d, %v", size, off, n, err)
			}
			want := make([]byte, size)
			if _, err := dev.ReadAt(want, off); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf, want) {
				t.Errorf("pread %d at 0x%x = % x, direct ReadAt = % x", size, off, buf, want)
			}
			if l := rec.take(); !slices.Equal(l, []access{{false, off, size}}) {
				t.Errorf("pread %d at 0x%x reached the device as %+v", size, off, l)
			}
		}
	}

	// The gateway counter advances on each read: no cache, no merging.
	ctr := int64(emu.GatewayOffset + 8)
	var a, b [4]byte
	if _, err := unix.Pread(fd, a[:], ctr); err != nil {
		t.Fatal(err)
	}
	if _, err := unix.Pread(fd, b[:], ctr); err != nil {
		t.Fatal(err)
	}
	if binary.LittleEndian.Uint32(a[:]) == binary.LittleEndian.Uint32(b[:]) {
		t.Errorf("two reads of the gateway counter both returned 0x%x; reads are being cached", binary.LittleEndian.Uint32(a[:]))
	}
	rec.take()

	// Writes: take and release the gateway semaphore with a 4-byte write,
	// then 1- and 2-byte writes at odd offsets, each arriving unchanged.
	sem := int64(emu.GatewayOffset + 0xC)
	var w [4]byte
	binary.LittleEndian.PutUint32(w[:], 0x1234)
	if n, err := unix.Pwrite(fd, w[:], sem); err != nil || n != 4 {
		t.Fatalf("pwrite semaphore: %d, %v", n, err)
	}
	if s := dev.State().GatewaySemaphore; s != 0x1234 {
		t.Errorf("semaphore after the write = 0x%x, want 0x1234", s)
	}
	if n, err := unix.Pwrite(fd, []byte{0, 0, 0, 0}, sem); err != nil || n != 4 {
		t.Fatalf("release: %d, %v", n, err)
	}
	if n, err := unix.Pwrite(fd, []byte{0xAB}, 0x3d); err != nil || n != 1 {
		t.Fatalf("pwrite 1 at 0x3d: %d, %v", n, err)
	}
	if n, err := unix.Pwrite(fd, []byte{1, 2}, 0x102); err != nil || n != 2 {
		t.Fatalf("pwrite 2 at 0x102: %d, %v", n, err)
	}
	want := []access{{true, sem, 4}, {true, sem, 4}, {true, 0x3d, 1}, {true, 0x102, 2}}
	if l := rec.take(); !slices.Equal(l, want) {
		t.Errorf("writes reached the device as %+v, want %+v", l, want)
	}

	// The end of config space ends the file, as in sysfs.
	buf := make([]byte, 8)
	if n, err := unix.Pread(fd, buf, emu.ConfigSize-4); n != 4 || err != nil {
		t.Errorf("pread 8 at size-4: %d, %v; want 4 bytes", n, err)
	}
	if n, err := unix.Pread(fd, buf, emu.ConfigSize); n != 0 || err != nil {
		t.Errorf("pread at the end: %d, %v; want 0, nil", n, err)
	}
}

// TestAttributeFiles checks the text files tools read, and that they are
// read-only.
func TestAttributeFiles(t *testing.T) {
	if !inPrivateNS(t) {
		return
	}
	dev, _ := newDevice()
	serve(t, sysfs.DeviceEntry{BDF: bdf, Dev: dev, NUMANode: -1, Netdevs: []string{"eth2", "eth3"}, RDMA: []string{"mlx5_0"}})
	dir := filepath.Join(devices, bdf)
	want := map[string]string{
		"vendor": "0x15b3\n", "device": "0x1021\n", "subsystem_vendor": "0x15b3\n", "subsystem_device": "0x0021\n",
		"class": "0x020000\n", "revision": "0x00\n", "numa_node": "-1\n",
		"modalias": "pci:v000015B3d00001021sv000015B3sd00000021bc02sc00i00\n",
	}
	for name, w := range want {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(b) != w {
			t.Errorf("%s = %q, %v; want %q", name, b, err, w)
		}
	}
	res, err := os.ReadFile(filepath.Join(dir, "resource"))
	if err != nil || !strings.HasPrefix(string(res), "0x00000000e0000000 0x00000000e1ffffff 0x000000000014220c\n") {
		t.Errorf("resource = %q, %v", res, err)
	}
	for sub, w := range map[string][]string{"net": {"eth2", "eth3"}, "infiniband": {"mlx5_0"}} {
		ents, err := os.ReadDir(filepath.Join(dir, sub))
		var got []string
		for _, e := range ents {
			got = append(got, e.Name())
		}
		if err != nil || !slices.Equal(got, w) {
			t.Errorf("%s/ lists %v, %v; want %v", sub, got, err, w)
		}
	}
	if _, err := os.OpenFile(filepath.Join(dir, "vendor"), os.O_WRONLY, 0); !errors.Is(err, unix.EACCES) {
		t.Errorf("opening vendor for writing: %v, want EACCES", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "resource0")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("resource0 should not exist (tools would try to mmap it): %v", err)
	}
}

// TestParallelClients runs several independent client stacks (as several
// tools would) on one function at once; the gateway semaphore, served
// through FUSE, keeps them apart.
func TestParallelClients(t *testing.T) {
	if !inPrivateNS(t) {
		return
	}
	dev, img := newDevice()
	serve(t, sysfs.DeviceEntry{BDF: bdf, Dev: dev})
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			errs <- func() error {
				cfg, err := pci.OpenConfig(filepath.Join(devices, bdf, "config"))
				if err != nil {
					return err
				}
				defer cfg.Close()
				gw, err := vsec.Open(cfg, nil)
				if err != nil {
					return err
				}
				// A distinct ICMD semaphore value per client, as distinct
				// processes would use.
				ic, err := icmd.Open(ctxT(t), gw, &icmd.Options{SemaphoreValue: uint32(1000 + i)})
				if err != nil {
					return err
				}
				defer ic.Close(ctxT(t)) // before the config file closes
				rc := regaccess.New(ic)
				for j := 0; j < 3; j++ {
					got, err := rc.Access(ctxT(t), regaccess.Get, regMGIR, make([]byte, 160))
					if err != nil {
						return err
					}
					if !bytes.Equal(got, img) {
						return fmt.Errorf("client read a different MGIR: % x", got[:16])
					}
				}
				return nil
			}()
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

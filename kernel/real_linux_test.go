//go:build linux

package kernel

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// These tests talk to the running kernel with read-only requests only:
// RTM_GETLINK, devlink INFO_GET and ethtool MODULE_EEPROM_GET on the
// loopback device (which has no module, so nothing is read from hardware).

// realDevice is a Device on the machine's own sysfs and netlink, for the
// calls that need no PCI function.
func realDevice(bdf string) *Device { return &Device{BDF: bdf} }

func TestRealLinkLoopback(t *testing.T) {
	l, err := realDevice("").Link(ctx5(t), "lo")
	if err != nil {
		t.Fatalf("RTM_GETLINK lo: %v", err)
	}
	if l.Name != "lo" || l.Address.String() != "00:00:00:00:00:00" || l.PermanentAddress != nil {
		t.Errorf("lo: %+v", l)
	}
	if b, err := os.ReadFile("/sys/class/net/lo/ifindex"); err == nil && strings.TrimSpace(string(b)) != strconv.Itoa(l.Index) {
		t.Errorf("lo index %d, sysfs says %s", l.Index, b)
	}
	var nf *NotFoundError
	if _, err := realDevice("").Link(ctx5(t), "cxnosuch0"); !errors.As(err, &nf) {
		t.Errorf("unknown interface: %v", err)
	}
	// A name the kernel could never have is refused before asking it.
	if _, err := realDevice("").Link(ctx5(t), "cxray-no-such-interface"); err == nil || !strings.Contains(err.Error(), "not an interface name") {
		t.Errorf("overlong name: %v", err)
	}
}

// TestRealLinksMatchSysfs: for every interface here, the current address
// from rtnetlink equals sysfs's, and a permanent address, when the kernel
// gives one, is a real address.
func TestRealLinksMatchSysfs(t *testing.T) {
	ents, err := os.ReadDir("/sys/class/net")
	if err != nil {
		t.Skipf("SKIP: no /sys/class/net here: %v", err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/sys/class/net", e.Name(), "address"))
		if err != nil {
			continue
		}
		sys := strings.TrimSpace(string(b))
		l, err := realDevice("").Link(ctx5(t), e.Name())
		if err != nil {
			t.Errorf("%s: %v", e.Name(), err)
			continue
		}
		if sys != "" && l.Address.String() != sys {
			t.Errorf("%s: netlink %s, sysfs %s", e.Name(), l.Address, sys)
		}
		if l.PermanentAddress != nil && isZero(l.PermanentAddress) {
			t.Errorf("%s: zero permanent address kept", e.Name())
		}
		t.Logf("%s: current %s permanent %s", e.Name(), l.Address, l.PermanentAddress)
	}
}

// ethtoolOrSkip skips when the kernel has no ethtool netlink.
func ethtoolOrSkip(t *testing.T, err error) {
	var ue *UnsupportedError
	if errors.As(err, &ue) && ue.What == "ethtool" {
		t.Skipf("SKIP: this kernel has no ethtool netlink family: %v", err)
	}
}

// TestRealModuleEEPROMLoopback: the loopback device has no module EEPROM;
// with CAP_NET_ADMIN the kernel says "not supported".
func TestRealModuleEEPROMLoopback(t *testing.T) {
	if !hasCapNetAdmin(t) {
		t.Skip("SKIP: this test needs CAP_NET_ADMIN (run as root); TestRealModuleEEPROMWithoutCapNetAdmin covers the other case")
	}
	_, err := realDevice("").ReadModuleEEPROM(ctx5(t), "lo", PageRequest{I2CAddress: 0x50, Length: 1})
	ethtoolOrSkip(t, err)
	var ue *UnsupportedError
	if !errors.As(err, &ue) {
		t.Fatalf("lo: got %T %v, want *UnsupportedError", err, err)
	}
	t.Logf("lo: %v", err)
}

// TestRealModuleEEPROMWithoutCapNetAdmin: without CAP_NET_ADMIN the real
// kernel refuses MODULE_EEPROM_GET, and the error says how to get it. As
// root, the capability is dropped from one locked OS thread, which opens
// the socket and sends on it (the kernel checks both); the thread is never
// handed back to the runtime, so the rest of the process keeps its rights.
func TestRealModuleEEPROMWithoutCapNetAdmin(t *testing.T) {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
		if hasCapNetAdmin(t) {
			if err := dropCapNetAdmin(); err != nil {
				errc <- &skipError{err}
				return
			}
		}
		_, err := realDevice("").ReadModuleEEPROM(context.Background(), "lo", PageRequest{I2CAddress: 0x50, Length: 1})
		errc <- err
	}()
	var err error
	select {
	case err = <-errc:
	case <-time.After(10 * time.Second):
		t.Fatal("no answer from the kernel in 10 s")
	}
	var se *skipError
	if errors.As(err, &se) {
		t.Skipf("SKIP: cannot drop CAP_NET_ADMIN from a thread here: %v", se.err)
	}
	ethtoolOrSkip(t, err)
	var pe *PermissionError
	if !errors.As(err, &pe) {
		t.Fatalf("got %T %v, want *PermissionError", err, err)
	}
	for _, want := range []string{"CAP_NET_ADMIN", "run as root", "setcap cap_net_admin+ep"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message lacks %q: %v", want, err)
		}
	}
	t.Logf("without CAP_NET_ADMIN: %v", err)
}

type skipError struct{ err error }

func (e *skipError) Error() string { return e.err.Error() }

const capNetAdmin = 12

func capData() (unix.CapUserHeader, [2]unix.CapUserData, error) {
	h := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var d [2]unix.CapUserData
	err := unix.Capget(&h, &d[0])
	return h, d, err
}

func hasCapNetAdmin(t *testing.T) bool {
	_, d, err := capData()
	if err != nil {
		t.Logf("capget: %v", err)
		return false
	}
	return d[0].Effective&(1<<capNetAdmin) != 0
}

// dropCapNetAdmin clears CAP_NET_ADMIN from the calling thread's effective
// set only.
func dropCapNetAdmin() error {
	h, d, err := capData()
	if err != nil {
		return err
	}
	d[0].Effective &^= 1 << capNetAdmin
	return unix.Capset(&h, &d[0])
}

// TestRealDevlinkUnknownDevice: devlink answers INFO_GET for an address
// no device has with "no such device".
func TestRealDevlinkUnknownDevice(t *testing.T) {
	_, err := realDevice("0000:ff:1f.7").DevlinkInfo(ctx5(t))
	var ue *UnsupportedError
	if errors.As(err, &ue) {
		t.Skipf("SKIP: this kernel has no devlink: %v", err)
	}
	var nf *NotFoundError
	if !errors.As(err, &nf) {
		t.Fatalf("got %T %v, want *NotFoundError", err, err)
	}
}

// TestRealMlx5: on a machine with a ConnectX adapter, a full snapshot of
// each function works and agrees with itself.
func TestRealMlx5(t *testing.T) {
	names, err := List(ctx5(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(names) == 0 {
		t.Skip("SKIP: no function bound to mlx5_core on this machine; the real-device test needs a ConnectX adapter (the fake-tree tests cover the parsing)")
	}
	for _, n := range names {
		d, err := Open(ctx5(t), n, Options{})
		if err != nil {
			t.Errorf("%s: %v", n, err)
			continue
		}
		s, err := d.Snapshot(ctx5(t), SnapshotOptions{Devlink: true, Links: true, Modules: hasCapNetAdmin(t)})
		if err != nil {
			t.Errorf("%s: %v", n, err)
			continue
		}
		t.Logf("%s (%s): fw %s psid %s, %d ports, %d temps, errors %v", n, s.BDF, s.Identity.FirmwareVersion, s.Identity.BoardID, len(s.Ports), len(s.Thermal.Temps), s.Errors)
		for _, nd := range s.Netdevs {
			if nd.Address != "" {
				if _, err := net.ParseMAC(nd.Address); err != nil {
					t.Errorf("%s: %v", nd.Name, err)
				}
			}
		}
	}
}

// TestRealSocketHonoursContext: a receive on a real netlink socket that
// gets no answer (nothing was asked) returns when the context is
// cancelled: the binding moves the socket's deadline.
func TestRealSocketHonoursContext(t *testing.T) {
	c, err := dialRoute()
	if err != nil {
		t.Skipf("SKIP: no rtnetlink socket here: %v", err)
	}
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	stop := bindContext(ctx, c.SetDeadline)
	defer stop()
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	done := make(chan error, 1)
	go func() { _, err := c.Receive(); done <- err }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a receive with nothing to receive returned no error")
		}
		if el := time.Since(start); el < 50*time.Millisecond || el > 3*time.Second {
			t.Errorf("returned after %v", el)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("cancelling the context did not wake the receive")
	}
}

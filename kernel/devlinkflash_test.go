package kernel

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mdlayher/netlink"

	"github.com/cxray/cxray/internal/linuxabi"
	"github.com/cxray/cxray/kernel/kerneltest"
)

// devlink dev flash: the file is staged in the firmware folder and named
// relative to it; the request listens on the config group first, so the
// driver's status notifications arrive in order; a driver refusal comes
// back with its extended ack; the staged file is removed. Reload
// fw_activate sends the action and reads what the kernel performed.
func TestFlashUpdateAndReload(t *testing.T) {
	f := newFixture(t)
	f.kern.FirmwareDir = t.TempDir()
	const h = "pci/0000:c1:00.0"
	notes := []kerneltest.FlashNote{
		{Msg: "Preparing to flash", Component: "fw.mgmt"},
		{Msg: "Downloading", Component: "fw.mgmt", Done: 4096, Total: 8192},
		{Msg: "Downloading", Component: "fw.mgmt", Done: 8192, Total: 8192},
		{Msg: "Activating", Timeout: 120},
	}
	f.kern.Flash = map[string]kerneltest.FlashScript{h: {Status: notes, Stored: "28.41.1000"}}
	f.kern.Reload = map[string]kerneltest.ReloadScript{h: {}}
	d := f.open(t, "mlx5_0")
	name, cleanup, err := d.StageFirmware("t.mfa2", []byte("package bytes"))
	if err != nil {
		t.Fatal(err)
	}
	var got []FlashStatus
	if err := d.FlashUpdate(ctx5(t), name, func(s FlashStatus) { got = append(got, s) }); err != nil {
		t.Fatal(err)
	}
	cleanup()
	want := []FlashStatus{{Msg: "Preparing to flash", Component: "fw.mgmt"}, {Msg: "Downloading", Component: "fw.mgmt", Done: 4096, Total: 8192},
		{Msg: "Downloading", Component: "fw.mgmt", Done: 8192, Total: 8192}, {Msg: "Activating", Timeout: 120}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
	reqs := f.kern.FlashRequests()
	if diff := cmp.Diff([]kerneltest.FlashRequest{{Handle: h, File: "cxray/t.mfa2", Data: []byte("package bytes"), Joined: true}}, reqs); diff != "" {
		t.Errorf("flash requests (-want +got):\n%s", diff)
	}
	if info, err := d.DevlinkInfo(ctx5(t)); err != nil || info.FirmwareStored() != "28.41.1000" || !info.FirmwarePending() {
		t.Errorf("after flash: %+v %v", info, err)
	}
	done, err := d.ReloadFWActivate(ctx5(t))
	if err != nil || !cmp.Equal(done, []string{"fw_activate"}) {
		t.Errorf("reload: %v %v", done, err)
	}
	if diff := cmp.Diff([]kerneltest.ReloadRequest{{Handle: h, Action: linuxabi.DEVLINK_RELOAD_ACTION_FW_ACTIVATE}}, f.kern.ReloadRequests()); diff != "" {
		t.Errorf("reload requests (-want +got):\n%s", diff)
	}
	if info, _ := d.DevlinkInfo(ctx5(t)); info.FirmwareRunning() != "28.41.1000" {
		t.Errorf("after reload running %q", info.FirmwareRunning())
	}

	// The driver refuses: errno and its extended ack reach the caller,
	// after the notifications sent before the refusal.
	f.kern.Flash[h] = kerneltest.FlashScript{Status: notes[:1], Errno: linuxabi.EINVAL, ExtAck: "Firmware flash failed: PSID mismatch"}
	name, cleanup, err = d.StageFirmware("u.mfa2", []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	got = nil
	err = d.FlashUpdate(ctx5(t), name, func(s FlashStatus) { got = append(got, s) })
	var fe *FlashError
	if !errors.As(err, &fe) || fe.ExtAck != "Firmware flash failed: PSID mismatch" || !errors.Is(err, linuxabi.EINVAL) || len(got) != 1 {
		t.Errorf("refused flash: %v (progress %v)", err, got)
	}
	// A file the kernel cannot find: its own message.
	err = d.FlashUpdate(ctx5(t), "cxray/missing.mfa2", nil)
	if !errors.As(err, &fe) || fe.ExtAck != "failed to locate the requested firmware file" {
		t.Errorf("missing file: %v", err)
	}
	// A staged name is never reused over other contents.
	if _, _, err := d.StageFirmware("u.mfa2", []byte("y")); err == nil {
		t.Error("staging over an existing file succeeded")
	}
	f.kern.Reload[h] = kerneltest.ReloadScript{Errno: linuxabi.EOPNOTSUPP, ExtAck: "FW activate is unsupported for this function"}
	if _, err := d.ReloadFWActivate(ctx5(t)); !errors.As(err, &fe) || fe.ExtAck != "FW activate is unsupported for this function" {
		t.Errorf("refused reload: %v", err)
	}
}

// FuzzFlashStatus feeds notification bodies to the flash status parser:
// no panic, and a body it accepts, encoded again from what it read, reads
// the same (nothing is invented or lost).
func FuzzFlashStatus(f *testing.F) {
	seed := netlink.NewAttributeEncoder()
	seed.String(linuxabi.DEVLINK_ATTR_BUS_NAME, "pci")
	seed.String(linuxabi.DEVLINK_ATTR_DEV_NAME, "0000:c1:00.0")
	seed.String(linuxabi.DEVLINK_ATTR_FLASH_UPDATE_STATUS_MSG, "Downloading")
	seed.Uint64(linuxabi.DEVLINK_ATTR_FLASH_UPDATE_STATUS_DONE, 4096)
	seed.Uint64(linuxabi.DEVLINK_ATTR_FLASH_UPDATE_STATUS_TOTAL, 8192)
	b, _ := seed.Encode()
	f.Add(b)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		bus, dev, st, err := parseFlashStatus(data)
		if err != nil {
			return
		}
		ae := netlink.NewAttributeEncoder()
		ae.String(linuxabi.DEVLINK_ATTR_BUS_NAME, bus)
		ae.String(linuxabi.DEVLINK_ATTR_DEV_NAME, dev)
		ae.String(linuxabi.DEVLINK_ATTR_FLASH_UPDATE_STATUS_MSG, st.Msg)
		ae.String(linuxabi.DEVLINK_ATTR_FLASH_UPDATE_COMPONENT, st.Component)
		ae.Uint64(linuxabi.DEVLINK_ATTR_FLASH_UPDATE_STATUS_DONE, st.Done)
		ae.Uint64(linuxabi.DEVLINK_ATTR_FLASH_UPDATE_STATUS_TOTAL, st.Total)
		ae.Uint64(linuxabi.DEVLINK_ATTR_FLASH_UPDATE_STATUS_TIMEOUT, st.Timeout)
		again, err := ae.Encode()
		if err != nil {
			return // a string with a NUL cannot be encoded back
		}
		bus2, dev2, st2, err := parseFlashStatus(again)
		if err != nil || bus2 != bus || dev2 != dev || st2 != st {
			t.Fatalf("re-encoded status reads differently: %q %q %+v vs %q %q %+v (%v)", bus, dev, st, bus2, dev2, st2, err)
		}
	})
}

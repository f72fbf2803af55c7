package conformance

import (
	"strings"
	"testing"
	"time"
)

// TestLockdownThroughFUSE: on a host in kernel lockdown the sysfs config
// file refuses writes (EPERM) to every process. Under emu run the FUSE
// config file does the same, so NVIDIA's tools fail the way they do on
// such a host: at their first config-space write, the gateway semaphore's
// (mstflint's message names the errno), leaving the device untouched;
// a plain write is refused too. cxray --via auto takes the fwctl
// command interface the emulated host offers (/dev/fwctl, as mlx5_fwctl
// does) and reads the device; --via vsec is refused with exit 3.
func TestLockdownThroughFUSE(t *testing.T) {
	need(t, "mstflint", "mstreg", "mstlink", "mstconfig")
	tools := []struct{ name, argv string }{
		{"flint", "mstflint -d 0000:03:00.0 q"},
		{"mstreg", "mstreg -d 0000:03:00.0 --reg_name MGIR --get"},
		{"mstlink", "mstlink -d 0000:03:00.0"},
		{"mstconfig", "mstconfig -d 0000:03:00.0 q"},
	}
	var script strings.Builder
	for _, tl := range tools {
		script.WriteString("run " + tl.name + " " + tl.argv + "\n")
	}
	script.WriteString(`run poke sh -c 'printf "\001\000\000\000" | dd of=/sys/bus/pci/devices/0000:03:00.0/config bs=4 seek=51 conv=notrunc'
run cfg od -An -v -tx1 -N256 /sys/bus/pci/devices/0000:03:00.0/config
run auto cxray reg get MGIR -d 0000:03:00.0 -o json
run auto1 cxray reg get MGIR -d 0000:03:00.1 -o json
run vsec cxray reg get MGIR -d 0000:03:00.0 --via vsec
run health cxray health -d 0000:03:00.1 -o json
run caps cxray caps -d 0000:03:00.1 --type general -o json
`)
	s := emuRun(t, "lockdown.yaml", script.String(), 4*time.Minute)
	for _, tl := range append(tools, struct{ name, argv string }{"poke", "dd to the config file"}) {
		r := s.step(t, tl.name)
		switch {
		case r.rc == 124 || r.rc == 137:
			t.Errorf("%s hung under lockdown\n%s", tl.argv, r)
		case r.rc == 0:
			t.Errorf("%s succeeded under lockdown\n%s", tl.argv, r)
		case !strings.Contains(r.stdout+r.stderr, "Operation not permitted"):
			t.Errorf("%s: the failure does not name the refused write (EPERM)\n%s", tl.argv, r)
		}
		t.Logf("%s: exit %d: %s", tl.argv, r.rc, firstLine(r.stderr+r.stdout))
	}
	if sem, err := gatewaySemaphore(s.out + "/cfg.out"); err != nil || sem != 0 {
		t.Errorf("gateway semaphore after the refused tools: %#x (%v); want 0: nothing reached the device", sem, err)
	}
	for _, name := range []string{"auto", "auto1"} {
		var got map[string]any
		cxrayJSON(t, s.ok(t, name), &got)
		if v, _ := jget(got, "via"); v != "fwctl" {
			t.Errorf("%s: via %v, want fwctl", name, v)
		}
		if v, _ := jget(got, "fields.fw_info.psid"); v != "MT_0000000834" {
			t.Errorf("%s: MGIR psid %v through fwctl", name, v)
		}
	}
	if r := s.step(t, "vsec"); r.rc != 3 || !strings.Contains(r.stderr, "lockdown") {
		t.Errorf("--via vsec under lockdown: want exit 3 naming lockdown\n%s", r)
	}
	var h struct {
		Devices []struct {
			Backend string `json:"backend"`
			Via     string `json:"via"`
			Status  string `json:"status"`
		} `json:"devices"`
	}
	cxrayJSON(t, s.ok(t, "health"), &h)
	if len(h.Devices) != 1 || (h.Devices[0].Backend != "fwctl" && h.Devices[0].Via != "fwctl") || h.Devices[0].Status != "ok" {
		t.Errorf("health of the second PF under lockdown: %+v, want ok through fwctl", h.Devices)
	}
	// The command interface answers for the second PF too: it manages
	// its own e-switch.
	var c struct {
		Pages []struct {
			Fields []struct {
				Path    string `json:"path"`
				Current uint64 `json:"current"`
			} `json:"fields"`
		} `json:"pages"`
	}
	cxrayJSON(t, s.ok(t, "caps"), &c)
	manager := false
	for _, p := range c.Pages {
		for _, f := range p.Fields {
			manager = manager || f.Path == "eswitch_manager" && f.Current == 1
		}
	}
	if !manager {
		t.Errorf("caps of the second PF through fwctl: not an e-switch manager\n%+v", c)
	}
}

package scenario

import (
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/emu"
)

func TestNVMFAndLockdownKeys(t *testing.T) {
	sc, err := FromProfile("cx7-2p400g")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(NVMFDefaults("cx7-2p400g"), sc.Devices[0].NVMF); d != "" || len(sc.Devices[0].NVMF.XRQs[0].Namespaces) != 2 {
		t.Errorf("cx7 default NVMe-oF (-want +got):\n%s", d)
	}
	sc, _ = FromProfile("cx6dx-2p100g")
	if sc.Devices[0].NVMF.Offload || len(sc.Devices[0].NVMF.XRQs) != 0 {
		t.Errorf("cx6dx has NVMe-oF offload by default: %+v", sc.Devices[0].NVMF)
	}
	sc, err = Parse([]byte(`devices:
  - profile: cx7-2p400g
    lockdown: true
    nvmf:
      xrqs:
        - xrqn: 0x20
          namespaces:
            - {nsid: 9, write_iops: 5, write_blocks: 2, inline_share: 1}
  - profile: cx7-2p400g
    nvmf: {offload: false}
`), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := NVMFSpec{Offload: true, XRQs: []XRQSpec{{XRQN: 0x20, Namespaces: []NamespaceSpec{{NSID: 9, ReadBlocks: 8, WriteIOPS: 5, WriteBlocks: 2, InlineShare: 1}}}}}
	if d := cmp.Diff(want, sc.Devices[0].NVMF); d != "" || !sc.Devices[0].Lockdown || sc.Devices[1].Lockdown {
		t.Errorf("parsed NVMe-oF (-want +got):\n%s\nlockdown %v %v", d, sc.Devices[0].Lockdown, sc.Devices[1].Lockdown)
	}
	if sc.Devices[1].NVMF.Offload || len(sc.Devices[1].NVMF.XRQs) != 0 {
		t.Errorf("offload: false keeps objects: %+v", sc.Devices[1].NVMF)
	}
	e, err := Build(sc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	lock, ok := e.Adapters[0].Functions[0].Config.(*emu.Lockdown)
	if !ok || lock.Device() != e.Adapters[0].Functions[0].Device {
		t.Fatal("the lockdown device's function is not behind emu.Lockdown")
	}
	if _, err := lock.WriteAt([]byte{0}, 0xC0); !errors.Is(err, syscall.EPERM) {
		t.Errorf("write: %v", err)
	}
	if e.Adapters[1].Functions[0].Config != ConfigSpace(e.Adapters[1].Functions[0].Device) {
		t.Error("a device without lockdown hands out its config space directly")
	}
	for _, tc := range []struct{ yaml, want string }{
		{"devices:\n  - nvmf: {offload: false, xrqs: [{xrqn: 1}]}\n", "xrqs need offload: true"},
		{"devices:\n  - nvmf: {xrqs: [{xrqn: 1}, {xrqn: 1}]}\n", "xrqn 1 is given twice"},
		{"devices:\n  - nvmf: {xrqs: [{namespaces: []}]}\n", "needs xrqn"},
		{"devices:\n  - nvmf: {xrqs: [{xrqn: 0x1000000}]}\n", "xrqn"},
		{"devices:\n  - nvmf: {xrqs: [{xrqn: 2, namespaces: [{read_iops: 1}]}]}\n", "needs nsid"},
		{"devices:\n  - nvmf: {xrqs: [{xrqn: 2, namespaces: [{nsid: 1}, {nsid: 1}]}]}\n", "namespace 1 is given twice"},
		{"devices:\n  - nvmf: {xrqs: [{xrqn: 2, namespaces: [{nsid: 1, inline_share: 2}]}]}\n", "inline_share"},
		{"devices:\n  - nvmf: {xrqs: [{xrqn: 2, namespaces: [{nsid: 1, read_blocks: 0}]}]}\n", "read_blocks"},
		{"devices:\n  - nvmf: {xrq: []}\n", `unknown key "xrq"`},
		{"devices:\n  - lockdown: sometimes\n", "must be true or false"},
	} {
		_, err := Parse([]byte(tc.yaml), "t.yaml")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.yaml, err, tc.want)
		}
	}
}

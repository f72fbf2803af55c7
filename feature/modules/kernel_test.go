package modules_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cxray/cxray/adapter/adaptertest"
	"github.com/cxray/cxray/feature/modules"
	"github.com/cxray/cxray/optics"
)

// `cxray module -d kernel:mlx5_0`: the module through ethtool netlink,
// decoded and diagnosed by the same code as MCIA; the firmware's view is
// not available on this backend and says so.
func TestModulesOnKernelBackend(t *testing.T) {
	a := adaptertest.Kernel(t, "kernel:mlx5_0", nil)
	rs, err := modules.Read(context.Background(), a, modules.Options{Verify: true, Interval: time.Millisecond, Raw: true})
	if err != nil || len(rs) != 1 {
		t.Fatal(rs, err)
	}
	r := rs[0]
	if r.Port != 1 || r.Netdev != "ens1f0np0" || r.EEPROMAccess != "ethtool" || r.EEPROM == nil || r.Raw == nil || r.Firmware != nil {
		t.Errorf("report: %+v", r)
	}
	if !strings.Contains(r.FirmwareError, "not available on the kernel backend") {
		t.Errorf("firmware error %q", r.FirmwareError)
	}
	// Verified: the EEPROM read twice; nothing to compare it with.
	if r.Verify == nil || r.Verify.EEPROMMonitors == 0 || r.Verify.FirmwareMonitors != 0 || len(r.Verify.Comparisons) != 0 {
		t.Errorf("verify without a firmware view: %+v", r.Verify)
	}
	// The fixture's module is a test pattern: its checksum fails, its
	// readings are past the pattern's thresholds, and they never move.
	got := map[string]bool{}
	for _, v := range r.Verdicts {
		got[v.Code] = true
	}
	for _, c := range []string{optics.VerdictChecksum, optics.VerdictThresholdAlarm, optics.VerdictFrozen} {
		if !got[c] {
			t.Errorf("no %s verdict: %v", c, codes(rs))
		}
	}
	for _, c := range []string{optics.VerdictModuleNotReadable, optics.VerdictSourcesDisagree, optics.VerdictStaleFirmware} {
		if got[c] {
			t.Errorf("%s on a backend without the firmware's view", c)
		}
	}
	var b bytes.Buffer
	modules.WriteText(&b, r, true)
	for _, want := range []string{"Port 1 · ens1f0np0\n", "  Source         EEPROM (ethtool)\n", "  Raw pages (ethtool)\n",
		"  Firmware view  not read: the firmware's module view (PDDR) is not available on the kernel backend"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("lacks %q:\n%s", want, b.String())
		}
	}
}

package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/cli/internal/statuscmd"
	"github.com/cxray/cxray/dev/devname"
	"github.com/cxray/cxray/kernel"
	"github.com/cxray/cxray/kernel/kerneltest"
	"github.com/cxray/cxray/optics"
)

// withKernelFixture points device names and the kernel backend at the
// two-port ConnectX-7 tree and its fake netlink kernel.
func withKernelFixture(t *testing.T) *kerneltest.Kernel {
	root := kerneltest.Tree(t, kerneltest.CX7)
	k := kerneltest.CX7Kernel()
	k.FirmwareDir = t.TempDir() // devlink flash stages files here, never in /lib/firmware
	savedSys, savedOpts := sys, kernelOptions
	sys = devname.Sys{Root: root}
	kernelOptions = func() kernel.Options {
		return kernel.Options{Root: root, DialGeneric: k.DialGeneric, DialRoute: k.DialRoute, Ethtool: k.Ethtool, FirmwareDir: k.FirmwareDir}
	}
	t.Cleanup(func() { sys, kernelOptions = savedSys, savedOpts })
	return k
}

// kernelStatusJSON runs `cxray status -d NAME -o json` on the fixture.
func kernelStatusJSON(t *testing.T, name string) ([]statuscmd.Entry, int, string) {
	t.Helper()
	out, errs, code := cli(t, "", "status", "-d", name, "-o", "json")
	var doc struct {
		Devices []statuscmd.Entry `json:"devices"`
	}
	if code <= 1 {
		mustJSON(t, out, &doc)
	}
	return doc.Devices, code, errs
}

func TestKernelStatus(t *testing.T) {
	withKernelFixture(t)
	es, code, errs := kernelStatusJSON(t, "kernel:mlx5_0")
	// The fixture's interface uses a MAC other than the permanent one:
	// status flags it and exits 1, as health does.
	if code != cmdutil.ExitProblem || len(es) != 1 {
		t.Fatalf("exit %d %v: %s", code, es, errs)
	}
	e := es[0]
	if e.BDF != "0000:c1:00.0" || e.Device != "kernel:mlx5_0" || e.Model != "ConnectX-7" || e.DeviceID != 0x1021 || e.Backend != "kernel" ||
		e.PSID != "MT_0000000838" || e.Firmware != "28.39.1002" || e.Ports != 1 || e.NUMANode != 1 || e.NodeGUID != "a088:c203:0045:67e2" ||
		e.PermanentMAC != "a0:88:c2:45:67:e2" || e.OSMACs["ens1f0np0"] != "02:11:22:33:44:55" || !e.MACDrift || e.Error != "" ||
		strings.Join(e.RDMA, ",") != "mlx5_0" || strings.Join(e.Netdevs, ",") != "ens1f0np0" {
		t.Errorf("%+v", e)
	}
	// A name that is not there: a device error naming what to do.
	_, code, errs = kernelStatusJSON(t, "kernel:mlx5_7")
	if code != cmdutil.ExitDevice || !strings.Contains(errs, "cxray status") {
		t.Errorf("unknown device: exit %d %s", code, errs)
	}
}

// TestKernelStatusWithoutDevlink: sysfs still fills the line, and the
// missing part is noted.
func TestKernelStatusWithoutDevlink(t *testing.T) {
	k := withKernelFixture(t)
	k.NoDevlink = true
	es, code, errs := kernelStatusJSON(t, "kernel:mlx5_1")
	if code != cmdutil.ExitOK || len(es) != 1 || es[0].Firmware != "28.39.1002" || es[0].PSID != "MT_0000000838" || !strings.Contains(es[0].Error, "devlink") || es[0].MACDrift {
		t.Fatalf("exit %d %+v %s", code, es, errs)
	}
}

// TestKernelRefusesRegisters: register reads and writes through the
// kernel backend fail (exit 3) with the advice to use direct access.
func TestKernelRefusesRegisters(t *testing.T) {
	withKernelFixture(t)
	for _, args := range [][]string{
		{"reg", "get", "MGIR", "-d", "kernel:mlx5_0"},
		{"reg", "set", "PAOS", "admin_status=up", "-d", "kernel:mlx5_0", "--yes"},
		{"reg", "get", "--id", "0x9042", "--len", "160", "-d", "kernel:mlx5_0"},
		{"config", "query", "-d", "kernel:mlx5_0"},
	} {
		_, errs, code := cli(t, "", args...)
		if code != cmdutil.ExitDevice || !strings.Contains(errs, "not available on the kernel backend") || !strings.Contains(errs, "-d 0000:c1:00.0 as root") {
			t.Errorf("%v: exit %d %s", args, code, errs)
		}
	}
}

// TestKernelModule: `cxray module -d kernel:NAME` reads the module through
// ethtool netlink and decodes it with the same code as MCIA; the
// firmware's view is named as unavailable, not as a fault. The fixture's
// module is a test pattern, so it fails its checksum and its thresholds.
func TestKernelModule(t *testing.T) {
	k := withKernelFixture(t)
	type report struct {
		Modules []struct {
			Port          int    `json:"port"`
			Netdev        string `json:"netdev"`
			Access        string `json:"eeprom_access"`
			EEPROMError   string `json:"eeprom_error"`
			FirmwareError string `json:"firmware_error"`
			EEPROM        *struct {
				Standard   string `json:"standard"`
				Identifier struct {
					Value int `json:"value"`
				} `json:"identifier"`
				Vendor struct {
					Name string `json:"name"`
				} `json:"vendor"`
				Lanes []json.RawMessage `json:"lanes"`
			} `json:"eeprom"`
			Raw *struct {
				Pages []json.RawMessage `json:"pages"`
			} `json:"raw"`
			Verify *struct {
				Monitors int `json:"eeprom_monitors"`
			} `json:"verify"`
			Verdicts []struct {
				Code string `json:"code"`
			} `json:"verdicts"`
		} `json:"modules"`
		AdapterFirmware string `json:"adapter_firmware"`
	}
	cli := func(args ...string) (int, report, string) {
		var out, errb bytes.Buffer
		code := run(append([]string{"module", "-d", "kernel:mlx5_0", "-o", "json"}, args...), nil, &out, &errb)
		var r report
		if code <= 1 {
			if err := json.Unmarshal(out.Bytes(), &r); err != nil {
				t.Fatalf("%v: %v\n%s", args, err, out.String())
			}
		}
		return code, r, errb.String()
	}

	code, r, _ := cli("--raw", "--verify", "--interval", "1ms")
	if code != cmdutil.ExitProblem || len(r.Modules) != 1 || r.AdapterFirmware != "28.39.1002" {
		t.Fatalf("exit %d: %+v", code, r)
	}
	m := r.Modules[0]
	if m.Port != 1 || m.Netdev != "ens1f0np0" || m.Access != "ethtool" || m.EEPROMError != "" || m.EEPROM == nil ||
		m.EEPROM.Standard != "CMIS" || m.EEPROM.Identifier.Value != 0x19 || m.EEPROM.Vendor.Name != "NVIDIA" || len(m.EEPROM.Lanes) == 0 {
		t.Fatalf("%+v", m)
	}
	if !strings.Contains(m.FirmwareError, "PDDR") || m.Raw == nil || len(m.Raw.Pages) < 2 || m.Verify == nil || m.Verify.Monitors == 0 {
		t.Errorf("firmware %q raw %v verify %v", m.FirmwareError, m.Raw, m.Verify)
	}
	codes := map[string]bool{}
	for _, v := range m.Verdicts {
		codes[v.Code] = true
	}
	if !codes["eeprom_checksum"] || !codes["threshold_alarm"] {
		t.Errorf("verdicts %v", codes)
	}

	// The function has one interface: port 2 is a usage error naming it.
	if code, _, stderr := cli("--port", "2"); code != cmdutil.ExitUsage || !strings.Contains(stderr, "ens1f0np0") {
		t.Errorf("--port 2: exit %d %s", code, stderr)
	}

	// No module on the interface: the read error is reported per port.
	delete(k.Modules, "ens1f0np0")
	code, r, _ = cli()
	if code > 1 || len(r.Modules) != 1 || r.Modules[0].EEPROMError == "" || r.Modules[0].EEPROM != nil {
		t.Errorf("no module: exit %d %+v", code, r)
	}
}

// TestKernelBackendCommands: health, roce status, monitor and status run
// on -d kernel: with what the kernel offers, and say which parts are not
// available on this backend instead of failing.
func TestKernelBackendCommands(t *testing.T) {
	withKernelFixture(t)
	// health: identity, ports, temperatures and counters from sysfs; the
	// register-only configuration check is skipped with the reason.
	out, errs, code := cli(t, "", "health", "-d", "kernel:mlx5_0", "--interval", "1ms", "-o", "json")
	var hr struct {
		Devices []struct {
			Backend string `json:"backend"`
			Checks  []struct {
				Name    string `json:"name"`
				Status  string `json:"status"`
				Summary string `json:"summary"`
			} `json:"checks"`
		} `json:"devices"`
	}
	mustJSON(t, out, &hr)
	if code != cmdutil.ExitProblem || len(hr.Devices) != 1 || hr.Devices[0].Backend != "kernel" {
		t.Fatalf("health: exit %d %s %s", code, out, errs)
	}
	st := map[string]string{}
	sum := map[string]string{}
	for _, c := range hr.Devices[0].Checks {
		st[c.Name], sum[c.Name] = c.Status, c.Summary
	}
	// The fixture's devlink has 28.41.1000 stored: pending, a warning.
	for name, want := range map[string]string{"identity": "warn", "access": "warn", "ports": "ok", "temperatures": "ok", "configuration": "skipped", "mac": "warn"} {
		if st[name] != want {
			t.Errorf("health %s: %s (%s), want %s", name, st[name], sum[name], want)
		}
	}
	if !strings.Contains(sum["configuration"], "not available on this backend") {
		t.Errorf("configuration: %q", sum["configuration"])
	}
	// roce status: the switches and the window need registers; the
	// retransmission counters come from hw_counters.
	out, errs, code = cli(t, "", "roce", "status", "-d", "kernel:mlx5_0", "--interval", "1ms", "-o", "json")
	var rr struct {
		FeaturesErr string             `json:"features_error"`
		Rates       map[string]float64 `json:"retransmission_rates_per_s"`
		RatesErr    string             `json:"retransmission_rates_error"`
	}
	mustJSON(t, out, &rr)
	if code != cmdutil.ExitOK || !strings.Contains(rr.FeaturesErr, "not available on the kernel backend") || rr.RatesErr != "" || rr.Rates == nil {
		t.Errorf("roce status: exit %d %+v %s", code, rr, errs)
	}
	// monitor: temperatures and the IB counters.
	out, errs, code = cli(t, "", "monitor", "-d", "kernel:mlx5_0", "--what", "temp,counters", "--count", "1", "-i", "1ms", "-o", "json")
	var s struct {
		Values map[string]float64 `json:"values"`
	}
	mustJSON(t, strings.SplitN(out, "\n", 2)[0], &s)
	if code != cmdutil.ExitOK || s.Values["temp.asic_c"] != 61.25 || len(s.Values) < 5 {
		t.Errorf("monitor: exit %d %v %s", code, s.Values, errs)
	}
	found := false
	for k := range s.Values {
		if strings.HasPrefix(k, "port1.ib.") {
			found = true
		}
	}
	if !found {
		t.Errorf("monitor: no IB counters in %v", s.Values)
	}
}

// status names each physical function as mst does, and -d takes the name.
func TestStatusListsMSTNames(t *testing.T) {
	withKernelFixture(t)
	out, _, _ := cli(t, "", "status", "-o", "json")
	var doc struct {
		Devices []statuscmd.Entry `json:"devices"`
	}
	mustJSON(t, out, &doc)
	named := 0
	for _, e := range doc.Devices {
		if e.MST == "" {
			continue
		}
		named++
		// The fixture has no config space: the read fails (exit 3), after
		// the report names the function the name resolved to.
		out, _, code := cli(t, "", "status", "-d", e.MST, "-o", "json")
		var one struct {
			Devices []statuscmd.Entry `json:"devices"`
		}
		mustJSON(t, out, &one)
		if len(one.Devices) != 1 || one.Devices[0].BDF != e.BDF || one.Devices[0].MST != e.MST {
			t.Errorf("-d %s: exit %d %+v, want %s", e.MST, code, one.Devices, e.BDF)
		}
	}
	if named == 0 {
		t.Errorf("no function has an mst name: %s", out)
	}
	table, _, _ := cli(t, "", "status")
	if !strings.Contains(table, "MST") || !strings.Contains(table, "_pciconf0") {
		t.Errorf("the table lacks the mst names:\n%s", table)
	}
}

// TestKernelDriverAndPCIe: the driver's health (devlink health reporters,
// driver statistics) and the PCIe link through the kernel fakes, as a
// table and as JSON with the same exit code, healthy and in trouble.
func TestKernelDriverAndPCIe(t *testing.T) {
	type check struct{ Name, Status, Summary string }
	health := func(t *testing.T) (map[string]check, string, int) {
		t.Helper()
		table, _, codeTable := cli(t, "", "health", "-d", "kernel:mlx5_0", "--interval", "1ms")
		out, errs, code := cli(t, "", "health", "-d", "kernel:mlx5_0", "--interval", "1ms", "-o", "json")
		if code != codeTable {
			t.Fatalf("exit %d as JSON, %d as a table (%s)", code, codeTable, errs)
		}
		var hr struct {
			Devices []struct {
				Checks []check `json:"checks"`
			} `json:"devices"`
		}
		mustJSON(t, out, &hr)
		got := map[string]check{}
		for _, c := range hr.Devices[0].Checks {
			got[c.Name] = c
		}
		return got, table, code
	}
	t.Run("healthy", func(t *testing.T) {
		withKernelFixture(t)
		got, table, _ := health(t)
		if c := got["driver"]; c.Status != "ok" || c.Summary != "5 of 5 devlink health reporters healthy; no discard or PCIe stall while watched" {
			t.Errorf("driver: %+v", c)
		}
		if c := got["pcie"]; c.Status != "ok" || !strings.HasPrefix(c.Summary, "Gen5 x16") {
			t.Errorf("pcie: %+v", c)
		}
		for _, want := range []string{"  ok   driver ", "  ok   pcie "} {
			if !strings.Contains(table, want) {
				t.Errorf("table lacks %q:\n%s", want, table)
			}
		}
	})
	t.Run("fw_fatal in error, discards", func(t *testing.T) {
		k := withKernelFixture(t)
		r := &k.Health["pci/0000:c1:00.0"][1]
		r.State, r.Errors = 1, 1
		k.Step = map[string]map[string]uint64{"ens1f0np0": {"rx_discards_phy": 100}}
		got, table, code := health(t)
		if code != cmdutil.ExitProblem || got["driver"].Status != "fail" || !strings.Contains(table, "fw_fatal is in error") ||
			!strings.Contains(table, "ens1f0np0.rx_discards_phy") {
			t.Errorf("exit %d, driver %+v:\n%s", code, got["driver"], table)
		}
	})
	t.Run("link --pcie", func(t *testing.T) {
		withKernelFixture(t)
		table, _, codeTable := cli(t, "", "link", "--pcie", "-d", "kernel:mlx5_0", "--interval", "1ms")
		out, errs, code := cli(t, "", "link", "--pcie", "-d", "kernel:mlx5_0", "--interval", "1ms", "-o", "json")
		if code != codeTable || code != cmdutil.ExitOK {
			t.Fatalf("exit %d table, %d JSON: %s", codeTable, code, errs)
		}
		var doc struct {
			PCIe struct {
				Text        string `json:"text"`
				Unavailable []struct {
					What string `json:"what"`
				} `json:"unavailable"`
			} `json:"pcie"`
		}
		mustJSON(t, out, &doc)
		if doc.PCIe.Text != "Gen5 x16" || len(doc.PCIe.Unavailable) != 3 {
			t.Errorf("%+v", doc.PCIe)
		}
		if !strings.Contains(table, "Slot's port                  Gen5 x16 (sysfs max_link_* of the slot's port 0000:c0:01.1)") &&
			!strings.Contains(table, "Gen5 x16 (sysfs max_link_* of the slot's port 0000:c0:01.1)") {
			t.Errorf("table:\n%s", table)
		}
	})
}

// Kernel-backend errors on the way to a module are the path's, never the
// module's: an interface the kernel does not know now (ENODEV) and a
// driver that does not give the EEPROM (EOPNOTSUPP) are category
// software, with a next step about the path, not "reseat the module"; in
// module's table and JSON and in health's modules check.
func TestKernelModulePathErrorsAreNotHardware(t *testing.T) {
	for _, c := range []struct {
		name, next string
		change     func(k *kerneltest.Kernel)
	}{
		{"driver without module EEPROM", "does not give the module EEPROM", func(k *kerneltest.Kernel) { delete(k.Modules, "ens1f0np0") }},
		{"no such interface now", "ip link", func(k *kerneltest.Kernel) { delete(k.Modules, "ens1f0np0"); delete(k.Links, "ens1f0np0") }},
	} {
		t.Run(c.name, func(t *testing.T) {
			k := withKernelFixture(t)
			c.change(k)
			out, errs, code := cli(t, "", "module", "-d", "kernel:mlx5_0", "-o", "json")
			var doc struct {
				Modules []struct {
					Verdicts []optics.Verdict `json:"verdicts"`
				} `json:"modules"`
			}
			mustJSON(t, out, &doc)
			if len(doc.Modules) != 1 || len(doc.Modules[0].Verdicts) != 1 {
				t.Fatalf("exit %d %s %s", code, out, errs)
			}
			v := doc.Modules[0].Verdicts[0]
			if v.Code != optics.VerdictModuleNotReadable || v.Category != optics.Software || !strings.Contains(v.NextStep, c.next) || strings.Contains(v.NextStep, "reseat") {
				t.Errorf("verdict %+v; want category software, next step with %q", v, c.next)
			}
			table, _, tcode := cli(t, "", "module", "-d", "kernel:mlx5_0")
			if tcode != code || !strings.Contains(table, "[software] eeprom_unreadable") || strings.Contains(table, "[hardware]") {
				t.Errorf("table: exit %d (json %d)\n%s", tcode, code, table)
			}
			hout, _, _ := cli(t, "", "health", "-d", "kernel:mlx5_0", "--interval", "1ms", "-o", "json")
			var h healthOut
			mustJSON(t, hout, &h)
			if m := check(h.Devices[0], "modules"); strings.Contains(strings.Join(m.Details, " "), "(hardware)") || strings.Contains(m.Next, "reseat") {
				t.Errorf("health modules: %+v", m)
			}
		})
	}
}

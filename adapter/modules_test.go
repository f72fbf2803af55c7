package adapter_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/dev/devtest"
	"github.com/cxray/cxray/kernel/kerneltest"
	"github.com/cxray/cxray/optics"
)

// putModule stores module memory as MCIA instances: one per 32-byte
// chunk, addressed as MCIA addresses it (i2c address, page, bank, byte).
func putModule(f *devtest.Fake, module int, mem map[kerneltest.PageKey][]byte) {
	for k, half := range mem {
		base := 0
		if k.Upper {
			base = 128
		}
		for off := 0; off < len(half); off += adapter.MCIAChunk {
			img := make([]byte, 0x10+adapter.MCIAChunk)
			copy(img[0x10:], half[off:min(off+adapter.MCIAChunk, len(half))])
			f.PutImage("MCIA", img, "module="+strconv.Itoa(module), "i2c_device_address="+strconv.Itoa(int(k.I2C)),
				"page_number="+strconv.Itoa(int(k.Page)), "bank_number="+strconv.Itoa(int(k.Bank)), "device_address="+strconv.Itoa(base+off))
		}
	}
}

// reads counts the accesses to a register, also while the fake holds no
// instance of it (it then names the register by its ID).
func reads(t *testing.T, f *devtest.Fake, name string) int {
	r, err := devtest.DB(t).Register(name)
	if err != nil {
		t.Fatal(err)
	}
	return f.Count(name) + f.Count(fmt.Sprintf("0x%04x", r.ID))
}

// topology reads the ports of an adapter and returns the PDDR reads that
// took (the operational page, for the protocol each port runs), so tests
// count the module reads apart.
func topology(t *testing.T, f *devtest.Fake, a *adapter.Adapter) int {
	t.Helper()
	if _, err := a.Ports(context.Background()); err != nil {
		t.Fatal(err)
	}
	return reads(t, f, "PDDR")
}

// halves turns an image back into the memory map it was read from.
func halves(im *optics.Image) map[kerneltest.PageKey][]byte {
	out := map[kerneltest.PageKey][]byte{}
	for _, p := range im.Pages {
		out[kerneltest.PageKey{I2C: p.I2C, Bank: p.Bank, Page: p.Page, Upper: p.Offset >= 128}] = p.Data
	}
	return out
}

func oneModulePort(f *devtest.Fake) {
	mgir(f)
	f.Put("PMLP", "local_port=1", "width=4", "lane_module_mapping[0].module=0")
}

// A decode-only read takes fewer bytes, each one the module's own; a second
// read of the same module reuses the static pages and reads fewer still.
func TestModuleReadsWhatDecodeNeeds(t *testing.T) {
	ctx := context.Background()
	db := devtest.DB(t)
	f := devtest.New(db)
	oneModulePort(f)
	f.Put("PMAOS", "module=0", "oper_status=plugged_enabled")
	mem := kerneltest.CMISModule()
	putModule(f, 0, mem)
	a := open(f, db, adapter.Config{})
	var counts []int
	for i := 0; i < 2; i++ {
		before := f.Count("MCIA")
		m, err := a.Module(ctx, 1, adapter.ModuleOptions{})
		if err != nil || m.EEPROM == nil || m.EEPROM.Standard != "CMIS" {
			t.Fatalf("read %d: %+v %v", i, m, err)
		}
		for k, got := range halves(m.Image) {
			want := mem[k]
			if len(got) > len(want) || !bytes.Equal(got, want[:len(got)]) {
				t.Errorf("read %d, %+v: %d bytes that are not the module's first ones", i, k, len(got))
			}
		}
		counts = append(counts, f.Count("MCIA")-before)
	}
	full := 6 * ((128 + adapter.MCIAChunk - 1) / adapter.MCIAChunk)
	if counts[0] >= full || counts[1] >= counts[0] {
		t.Errorf("MCIA reads: first %d, second %d; want first < %d (the full image) and second < first", counts[0], counts[1], full)
	}
}

// The EEPROM through MCIA, read in full: every half page the module's
// standard calls for, byte for byte, in chunks of MCIAChunk bytes.
func TestModuleThroughMCIA(t *testing.T) {
	ctx := context.Background()
	db := devtest.DB(t)
	f := devtest.New(db)
	oneModulePort(f)
	f.Put("PMAOS", "module=0", "oper_status=plugged_enabled")
	mem := kerneltest.CMISModule()
	putModule(f, 0, mem)
	a := open(f, db, adapter.Config{})
	topo := topology(t, f, a)
	m, err := a.Module(ctx, 1, adapter.ModuleOptions{Full: true})
	if err != nil {
		t.Fatal(err)
	}
	if m.Port != 1 || m.Module != 0 || m.Access != "MCIA" || m.Present == nil || !*m.Present || m.OperStatus != "plugged_enabled" || m.ErrorType != "" {
		t.Errorf("reading: %+v", m)
	}
	if d := cmp.Diff(mem, halves(m.Image)); d != "" {
		t.Errorf("EEPROM image (-module +read):\n%s", d)
	}
	if len(m.Image.Errors) != 0 {
		t.Errorf("page errors: %v", m.Image.Errors)
	}
	// 6 half pages of 128 bytes, in chunks of MCIAChunk.
	perHalf := (128 + adapter.MCIAChunk - 1) / adapter.MCIAChunk
	if n := f.Count("MCIA"); n != 6*perHalf {
		t.Errorf("%d MCIA reads, want %d", n, 6*perHalf)
	}
	if m.EEPROM == nil || m.EEPROM.Standard != "CMIS" || m.EEPROM.Vendor.Name != "NVIDIA" {
		t.Errorf("decode: %+v", m.EEPROM)
	}
	// The EEPROM decoded: the firmware's view is read only when asked.
	if m.EEPROMErr != nil || m.Firmware != nil || m.FirmwareErr != nil || reads(t, f, "PDDR") != topo {
		t.Errorf("EEPROM error %v, firmware %v %v, %d PDDR reads", m.EEPROMErr, m.Firmware, m.FirmwareErr, reads(t, f, "PDDR")-topo)
	}
	if m.Best() != m.EEPROM {
		t.Error("the decoded EEPROM is not the reading to show")
	}
	m, err = a.Module(ctx, 1, adapter.ModuleOptions{Firmware: true})
	if err != nil {
		t.Fatal(err)
	}
	// This firmware has no PDDR: the view's error says so.
	if reads(t, f, "PDDR") != topo+1 || !errors.Is(m.FirmwareErr, dev.ErrNotSupported) || m.Firmware != nil {
		t.Errorf("firmware view %v %v", m.Firmware, m.FirmwareErr)
	}
	obs := m.Observation()
	if obs.Module != 0 || obs.OperStatus != "plugged_enabled" || obs.EEPROM != m.EEPROM || obs.FirmwareErr != m.FirmwareErr || obs.FirmwareUnsupportsEE {
		t.Errorf("observation: %+v", obs)
	}
}

func TestModuleStates(t *testing.T) {
	ctx := context.Background()
	db := devtest.DB(t)
	t.Run("unplugged: no EEPROM read", func(t *testing.T) {
		f := devtest.New(db)
		oneModulePort(f)
		f.Put("PMAOS", "module=0", "oper_status=unplugged")
		putModule(f, 0, kerneltest.CMISModule())
		a := open(f, db, adapter.Config{})
		topo := topology(t, f, a)
		ms, err := a.Modules(ctx, adapter.ModuleOptions{Firmware: true})
		if err != nil || len(ms) != 1 {
			t.Fatal(ms, err)
		}
		m := ms[0]
		if m.Present == nil || *m.Present || m.Image != nil || m.EEPROMErr != nil || m.Best() != nil || f.Count("MCIA") != 0 || reads(t, f, "PDDR") != topo {
			t.Errorf("%+v; %d MCIA reads", m, f.Count("MCIA"))
		}
	})
	t.Run("plugged with error", func(t *testing.T) {
		f := devtest.New(db)
		oneModulePort(f)
		f.Put("PMAOS", "module=0", "oper_status=module_plugged_with_error", "error_type=High_Temperature")
		m, err := open(f, db, adapter.Config{}).Module(ctx, 1, adapter.ModuleOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if m.OperStatus != "module_plugged_with_error" || m.ErrorType != "High_Temperature" || !*m.Present {
			t.Errorf("%+v", m)
		}
		// MCIA answers "not supported": only the firmware's view.
		if !m.NoMCIA || m.EEPROMErr == nil || !strings.Contains(m.EEPROMErr.Error(), "does not offer MCIA") || !m.Observation().FirmwareUnsupportsEE {
			t.Errorf("no MCIA: %v %v", m.NoMCIA, m.EEPROMErr)
		}
	})
	t.Run("MCIA module status", func(t *testing.T) {
		f := devtest.New(db)
		oneModulePort(f)
		// No PMAOS: the state is unknown, the EEPROM is still read.
		img := make([]byte, 0x10+32)
		img[3] = 0x3 // no module in the cage
		f.PutImage("MCIA", img, "module=0")
		m, err := open(f, db, adapter.Config{}).Module(ctx, 1, adapter.ModuleOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if m.Present != nil || m.OperStatus != "" || m.EEPROMErr == nil || !strings.Contains(m.EEPROMErr.Error(), "module status 0x3 (no module in the cage)") {
			t.Errorf("%+v: %v", m, m.EEPROMErr)
		}
	})
	t.Run("PMAOS busy fails the call", func(t *testing.T) {
		f := devtest.New(db)
		oneModulePort(f)
		f.Fail("PMAOS", dev.StatusBusy, "module=0")
		_, err := open(f, db, adapter.Config{}).Modules(ctx, adapter.ModuleOptions{})
		if !errors.Is(err, dev.ErrBusy) || !strings.Contains(err.Error(), "port 1 module 0 (PMAOS)") {
			t.Errorf("%v", err)
		}
	})
	t.Run("a port the function does not own", func(t *testing.T) {
		f := devtest.New(db)
		oneModulePort(f)
		_, err := open(f, db, adapter.Config{}).Module(ctx, 2, adapter.ModuleOptions{})
		var np *adapter.NoPortError
		if !errors.As(err, &np) {
			t.Errorf("%v", err)
		}
	})
}

// Best prefers a decoded EEPROM, then a firmware view that identifies a
// module.
func TestModuleBest(t *testing.T) {
	ee, fw := &optics.Module{Standard: "CMIS"}, &optics.Module{CableType: "Active_cable"}
	for _, c := range []struct {
		name string
		m    adapter.ModuleReading
		want *optics.Module
	}{
		{"EEPROM", adapter.ModuleReading{EEPROM: ee, Firmware: fw}, ee},
		{"EEPROM failed", adapter.ModuleReading{EEPROM: ee, EEPROMErr: errors.New("checksum"), Firmware: fw}, fw},
		{"unplugged firmware view", adapter.ModuleReading{Firmware: &optics.Module{CableType: optics.CableUnplugged}}, nil},
		{"unidentified firmware view", adapter.ModuleReading{Firmware: &optics.Module{CableType: optics.CableUnidentified}}, nil},
		{"nothing", adapter.ModuleReading{}, nil},
	} {
		if got := c.m.Best(); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

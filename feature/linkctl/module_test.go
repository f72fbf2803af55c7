package linkctl_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/dev/devtest"
	"github.com/cxray/cxray/emu/emuadapter/emutest"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/feature/linkctl"
	"github.com/cxray/cxray/optics"
	"github.com/cxray/cxray/prm"
)

const twoModules = `clock: {mode: manual}
devices:
  - profile: cx7-2p400g
    modules:
      - module: 1
        type: qsfp28-100g-sr4
`

func moduleBytes(t *testing.T, ad *adapter.Adapter, port int, a optics.PageAddr, n int) []byte {
	t.Helper()
	d, err := ad.Registers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	p, err := ad.Port(context.Background(), port)
	if err != nil {
		t.Fatal(err)
	}
	b, err := (&adapter.MCIAReader{Device: d, Module: p.Module}).ReadPage(context.Background(), a, n)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A write to a CMIS module's byte 26 and to an SFF-8636 module's Tx_Disable
// and masks, decoded with the built-in database and every revision of the
// history: the plan shows the MCIA write, Apply verifies the read-back,
// the bytes read back as written, and the undo writes restore the old
// ones. A read-only byte, or a read-only bit of a writable byte, is an
// input error and nothing is written.
func TestModuleWrite(t *testing.T) {
	check := func(t *testing.T, db *prm.DB) {
		em := emutest.Build(t, mustParse(t, twoModules))
		ad := emutest.Open(t, em, "emu", db)[0]
		ctx := context.Background()
		if db.Revision == "Rev 0.51" {
			// MCIA's i2c_device_address is RW there: a database finding.
			a := optics.PageAddr{I2C: 0x50, Offset: 26}
			_, err := linkctl.PlanModuleWrite(ctx, ad, 1, a, []byte{0x10})
			if !errors.Is(err, prm.ErrInput) || !strings.Contains(err.Error(), "database finding") {
				t.Errorf("Rev 0.51: %v; want a database finding", err)
			}
			return
		}
		for _, c := range []struct {
			port int
			at   uint8
			data []byte
		}{
			{1, 26, []byte{0x10}},                 // CMIS LowPwrRequestSW
			{2, 86, []byte{0x05}},                 // SFF-8636 Tx_Disable channels 1 and 3
			{2, 100, []byte{0xFF, 0x0F, 0, 0xAA}}, // SFF-8636 masks
		} {
			a := optics.PageAddr{I2C: 0x50, Offset: c.at}
			old := moduleBytes(t, ad, c.port, a, len(c.data))
			ch, err := linkctl.PlanModuleWrite(ctx, ad, c.port, a, c.data)
			if err != nil {
				t.Fatalf("port %d byte %d: %v", c.port, c.at, err)
			}
			if len(ch.Steps) != 1 || ch.Steps[0].Register != "MCIA" || len(ch.Undo) != 1 {
				t.Fatalf("plan: %+v", ch)
			}
			var saved *linkctl.Change
			res, err := linkctl.Apply(ctx, ad, ch, linkctl.Options{}, func(c *linkctl.Change) error { saved = c; return nil })
			if err != nil || len(res.Verified) != 1 || saved == nil {
				t.Fatalf("port %d byte %d: apply %v, verified %v", c.port, c.at, err, res)
			}
			if d := cmp.Diff(c.data, moduleBytes(t, ad, c.port, a, len(c.data))); d != "" {
				t.Errorf("port %d byte %d read back (-want +got):\n%s", c.port, c.at, d)
			}
			u, err := linkctl.Undo(ctx, ad, saved)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := linkctl.Apply(ctx, ad, u, linkctl.Options{}, nil); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(old, moduleBytes(t, ad, c.port, a, len(c.data))); d != "" {
				t.Errorf("port %d byte %d after undo (-want +got):\n%s", c.port, c.at, d)
			}
		}
		for _, c := range []struct {
			port int
			at   uint8
			data []byte
		}{
			{1, 0, []byte{0x11}},   // CMIS identifier
			{1, 26, []byte{0x01}},  // CMIS byte 26 bit 0 is not host-writable
			{1, 130, []byte{0x00}}, // CMIS upper page 00h: vendor name
			{2, 86, []byte{0xF0}},  // SFF-8636 byte 86 high nibble is read-only
			{2, 104, []byte{0, 0}}, // the write runs past the masks into 105
			{2, 22, []byte{0x00}},  // SFF-8636 temperature monitor
		} {
			a := optics.PageAddr{I2C: 0x50, Offset: c.at}
			old := moduleBytes(t, ad, c.port, a, len(c.data))
			_, err := linkctl.PlanModuleWrite(ctx, ad, c.port, a, c.data)
			if !errors.Is(err, prm.ErrInput) {
				t.Errorf("port %d byte %d %x: %v; want an input error", c.port, c.at, c.data, err)
			}
			if d := cmp.Diff(old, moduleBytes(t, ad, c.port, a, len(c.data))); d != "" {
				t.Errorf("port %d byte %d changed by a refused write (-want +got):\n%s", c.port, c.at, d)
			}
		}
	}
	t.Run("builtin", func(t *testing.T) { check(t, devtest.DB(t)) })
	devtest.EachRevision(t, check)
}

func mustParse(t *testing.T, text string) *scenario.Scenario {
	t.Helper()
	sc, err := scenario.Parse([]byte(text), emutest.YAMLName)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// An SFP's soft controls: page 1 is its A2h map (I2C 0x51), as mlxlink
// numbers it; byte 110's soft TX disable is written there, read back and
// undone, with the undo command in mlxlink's numbering. Its read-only bits,
// other bytes, page 0's byte 110 and pages past 1 are refused.
func TestModuleWriteSFP(t *testing.T) {
	em := emutest.Build(t, mustParse(t, `clock: {mode: manual}
devices:
  - profile: cx7-2p400g
    modules:
      - module: 1
        type: sfp28-25g-lr
`))
	ad := emutest.Open(t, em, "emu", devtest.DB(t))[0]
	ctx := context.Background()
	a2 := optics.PageAddr{I2C: 0x51, Offset: 110}
	old := moduleBytes(t, ad, 2, a2, 1)
	ch, err := linkctl.PlanModuleWrite(ctx, ad, 2, optics.PageAddr{Page: 1, Offset: 110}, []byte{old[0] | 0x40})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ch.UndoFlags, "--page 1 --bank 0 --offset 110") || !strings.Contains(ch.Steps[0].String(), "i2c_device_address=81") {
		t.Errorf("plan: undo %q, step %s", ch.UndoFlags, ch.Steps[0])
	}
	var saved *linkctl.Change
	if _, err := linkctl.Apply(ctx, ad, ch, linkctl.Options{}, func(c *linkctl.Change) error { saved = c; return nil }); err != nil {
		t.Fatal(err)
	}
	if got := moduleBytes(t, ad, 2, a2, 1); got[0]&0x48 != 0x40 {
		t.Errorf("A2h byte 110 after soft TX disable: 0x%02x", got[0])
	}
	u, err := linkctl.Undo(ctx, ad, saved)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := linkctl.Apply(ctx, ad, u, linkctl.Options{}, nil); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(old, moduleBytes(t, ad, 2, a2, 1)); d != "" {
		t.Errorf("A2h byte 110 after undo (-want +got):\n%s", d)
	}
	for _, c := range []struct {
		a    optics.PageAddr
		data []byte
	}{
		{optics.PageAddr{Page: 1, Offset: 110}, []byte{old[0] | 0x80}}, // TX disable state: read-only
		{optics.PageAddr{Page: 1, Offset: 111}, []byte{0}},
		{optics.PageAddr{Page: 0, Offset: 110}, []byte{0x40}},
		{optics.PageAddr{Page: 2, Offset: 110}, []byte{0x40}},
	} {
		if _, err := linkctl.PlanModuleWrite(ctx, ad, 2, c.a, c.data); !errors.Is(err, prm.ErrInput) {
			t.Errorf("page %d byte %d 0x%x: %v; want an input error", c.a.Page, c.a.Offset, c.data, err)
		}
	}
	if d := cmp.Diff(old, moduleBytes(t, ad, 2, a2, 1)); d != "" {
		t.Errorf("A2h byte 110 changed by a refused write (-want +got):\n%s", d)
	}
}

package dev

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cxray/cxray/access/regaccess"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/builtin"
)

// fakeFW stores register images by ID; GETs echo the request's index fields
// by returning the stored image (or the request itself the first time).
type fakeFW struct {
	store map[uint16][]byte
	sets  int
	// mangle changes what a SET stores, to test verification.
	mangle func([]byte)
}

func (f *fakeFW) Access(_ context.Context, m regaccess.Method, id uint16, data []byte) ([]byte, error) {
	if id == 0x9999 {
		return nil, &regaccess.StatusError{Status: regaccess.StatusRegisterNotSupported, RegisterID: id, Method: m}
	}
	if m == regaccess.Set {
		f.sets++
		b := append([]byte(nil), data...)
		if f.mangle != nil {
			f.mangle(b)
		}
		f.store[id] = b
		return b, nil
	}
	if b, ok := f.store[id]; ok {
		return append([]byte(nil), b...), nil
	}
	return append([]byte(nil), data...), nil
}

func newDev(t *testing.T) (*Device, *fakeFW) {
	db, err := builtin.Load()
	if err != nil {
		t.Fatal(err)
	}
	fw := &fakeFW{store: map[uint16][]byte{}}
	return New("fake", "", "test", db, fw, nil), fw
}

func as(s ...string) []prm.Assignment {
	a, _ := prm.ParseAssignments(s)
	return a
}

func TestGetDefaultsIndex(t *testing.T) {
	d, _ := newDev(t)
	r, err := d.Get(context.Background(), "PAOS", nil, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(r.Defaulted, ",") != "local_port=1,lp_msb=0,swid=0" {
		t.Errorf("defaulted %v", r.Defaulted)
	}
	if v, _ := r.Decoded.Get("local_port"); v.Uint() != 1 {
		t.Errorf("local_port %d", v.Uint())
	}
	// PMAOS has a module index with no obvious value.
	_, err = d.Get(context.Background(), "PMAOS", nil, nil, 0)
	var ie *IndexError
	if !errors.As(err, &ie) || ie.Missing[0] != "module" || !strings.Contains(err.Error(), "--index module=N") {
		t.Errorf("missing index: %v", err)
	}
	// A non-index field given as an index is refused.
	_, err = d.Get(context.Background(), "PAOS", as("admin_status=1"), nil, 0)
	if err == nil || !strings.Contains(err.Error(), "--index takes only INDEX fields") {
		t.Errorf("admin_status as index: %v", err)
	}
}

func TestSetReadModifyWrite(t *testing.T) {
	d, fw := newDev(t)
	ctx := context.Background()
	idx := as("local_port=2")
	wp, err := d.PrepareSet(ctx, "PAOS", idx, as("admin_status=down_by_configuration", "ase=1"))
	if err != nil {
		t.Fatal(err)
	}
	if fw.sets != 0 {
		t.Fatal("PrepareSet wrote to the device")
	}
	changed := map[string]string{}
	for _, c := range wp.Changes {
		changed[c.Path] = c.After
	}
	if changed["admin_status"] != "down_by_configuration (2)" || changed["ase"] != "1" || changed["local_port"] != "" {
		t.Errorf("changes %v", wp.Changes)
	}
	back, err := d.ApplySet(ctx, wp, idx)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := back.Decoded.Get("admin_status"); v.Uint() != 2 {
		t.Errorf("read back %d", v.Uint())
	}
	if v, _ := back.Decoded.Get("local_port"); v.Uint() != 2 {
		t.Errorf("index lost: local_port %d", v.Uint())
	}
	// RO fields are refused before anything is read or written.
	sets := fw.sets
	_, err = d.PrepareSet(ctx, "PAOS", idx, as("oper_status=1"))
	var ro *ROError
	if !errors.As(err, &ro) || fw.sets != sets {
		t.Errorf("RO write: %v", err)
	}
	// A firmware that ignores the write is caught by the read-back.
	fw.mangle = func(b []byte) { b[2] &^= 0x0f }
	wp, _ = d.PrepareSet(ctx, "PAOS", idx, as("admin_status=up", "ase=1"))
	_, err = d.ApplySet(ctx, wp, idx)
	var ve *VerifyError
	if !errors.As(err, &ve) || ve.Mismatches[0].Path != "admin_status" {
		t.Errorf("verify: %v", err)
	}
}

func TestNotSupported(t *testing.T) {
	d, _ := newDev(t)
	_, err := d.GetRaw(context.Background(), 0x9999, make([]byte, 8))
	if !IsNotSupported(err) || !strings.Contains(err.Error(), "not supported") {
		t.Errorf("%v", err)
	}
}

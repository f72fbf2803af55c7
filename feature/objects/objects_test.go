package objects

import (
	"context"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/cxray/cxray/access/fwctl"
	"github.com/cxray/cxray/emu/cmdif"
	"github.com/cxray/cxray/emu/cmdif/cmdiftest"
	"github.com/cxray/cxray/kernel"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/cmdb"
)

func TestQueryQPs(t *testing.T) {
	r := cmdiftest.Profile(t, "cx7-2p400g")
	r.Clock.Advance(2 * time.Second)
	ctx := context.Background()
	q, err := QueryQP(ctx, r.Devices[0], cmdif.QPActive)
	if err != nil {
		t.Fatal(err)
	}
	want := &QP{QPN: cmdif.QPActive, State: "RTS", Type: "RC", PD: 3, MTU: "4K_BYTES", RemoteQPN: 0x230,
		NextSendPSN: 0x12a4b0 + 100000, LastAckedPSN: 0x12a4b0 + 100000 - 16, NextRecvPSN: 0x8f0001 + 96000, Unacked: 15,
		RetryCount: 7, RNRRetry: 7, CounterSetID: 1}
	if d := cmp.Diff(want, q, cmpopts.IgnoreFields(QP{}, "Context")); d != "" {
		t.Errorf("active QP (-want +got):\n%s", d)
	}
	e, err := QueryQP(ctx, r.Devices[0], cmdif.QPError)
	if err != nil {
		t.Fatal(err)
	}
	if !e.Error || e.State != "ERR" || !strings.Contains(e.ErrorNote, "retries ran out (7 of 7) with 7 packets") {
		t.Errorf("error QP: %+v", e)
	}
	ud, _ := QueryQP(ctx, r.Devices[0], cmdif.QPDatagram)
	if ud.Type != "UD" || ud.Error {
		t.Errorf("UD QP: %+v", ud)
	}
	_, err = QueryQP(ctx, r.Devices[0], 0x77)
	if !errors.Is(err, fwctl.ErrBadParam) {
		t.Errorf("no such QP: %v", err)
	}
	if rows := q.Rows(); len(rows) != 14 || rows[2][1] != "RTS" {
		t.Errorf("rows %q", rows)
	}
}

func TestQueryMKeys(t *testing.T) {
	r := cmdiftest.Profile(t, "cx7-2p400g")
	ctx := context.Background()
	m, err := QueryMKey(ctx, r.Devices[0], cmdif.MKeyData)
	if err != nil {
		t.Fatal(err)
	}
	want := &MKey{Key: cmdif.MKeyData, Index: cmdif.MKeyData >> 8, LocalRead: true, LocalWrite: true, RemoteRead: true, RemoteWrite: true,
		AccessMode: "MTT", Start: 0x7f3a20000000, Length: 1 << 30, PageSize: 4096, PD: 3, QPN: 0xffffff}
	if d := cmp.Diff(want, m, cmpopts.IgnoreFields(MKey{}, "Context")); d != "" {
		t.Errorf("data key (-want +got):\n%s", d)
	}
	ro, _ := QueryMKey(ctx, r.Devices[0], cmdif.MKeyRO)
	if !ro.LocalRead || ro.LocalWrite || ro.RemoteRead || ro.PageSize != 2<<20 || ro.Length != 2<<20 {
		t.Errorf("read-only key %+v", ro)
	}
	// The same index with another variant byte is another key.
	if _, err := QueryMKey(ctx, r.Devices[0], cmdif.MKeyData&^0xff|0x55); err == nil || !strings.Contains(err.Error(), "variant") {
		t.Errorf("stale key variant: %v", err)
	}
	if rows := ro.Rows(); rows[2][1] != "local read" || rows[8][1] != "none" {
		t.Errorf("rows %q", rows)
	}
}

// Raw bytes decode the same way (a dump, or the kernel's raw resource).
func TestDecodeBytes(t *testing.T) {
	db, _ := cmdb.Load()
	p, _ := db.Plan("qpc")
	b := p.NewBuffer()
	if err := p.Encode(b, []prm.Assignment{{Path: "state", Value: "SQER"}, {Path: "st", Value: "UC"}, {Path: "next_send_psn", Value: "5"}, {Path: "last_acked_psn", Value: "0xfffffe"}}); err != nil {
		t.Fatal(err)
	}
	q, err := DecodeQPBytes(b)
	if err != nil || q.State != "SQER" || !q.Error || q.Type != "UC" || q.Unacked != 6 {
		t.Errorf("qpc from bytes: %+v %v", q, err)
	}
	if _, err := DecodeQPBytes(b[:10]); err == nil {
		t.Error("a short qpc decoded")
	}
	mp, _ := db.Plan("mkc")
	mb := mp.NewBuffer()
	mp.Encode(mb, []prm.Assignment{{Path: "access_mode_4_2", Value: "1"}, {Path: "length64", Value: "1"}, {Path: "mkey_7_0", Value: "0x42"}})
	m, err := DecodeMKeyBytes(mb)
	if err != nil || m.AccessMode != "SW_ICM" || !m.WholeAddressSpace || m.Key != 0x42 {
		t.Errorf("mkc from bytes: %+v %v", m, err)
	}
}

// A QP and an MR from the kernel's raw resources: the dump's resource
// segment for the object carries its context.
func TestFromRawResources(t *testing.T) {
	db, _ := cmdb.Load()
	p, _ := db.Plan("qpc")
	ctxb := p.NewBuffer()
	p.Encode(ctxb, []prm.Assignment{{Path: "state", Value: "RTR"}, {Path: "next_rcv_psn", Value: "0x42"}})
	seg := func(index uint32, payload []byte) []byte {
		b := make([]byte, 16+len(payload))
		binary.BigEndian.PutUint32(b, uint32(len(b)/4)<<16|0x1001)
		binary.BigEndian.PutUint32(b[8:], index)
		copy(b[16:], payload)
		return b
	}
	q, err := FromRawQP(kernel.RawResource{Kind: kernel.ResQP, ID: 0x51, Raw: seg(0x51, ctxb)})
	if err != nil || q.State != "RTR" || q.NextRecvPSN != 0x42 || q.QPN != 0x51 {
		t.Errorf("QP from raw: %+v %v", q, err)
	}
	if _, err := FromRawQP(kernel.RawResource{Kind: kernel.ResQP, ID: 0x52, Raw: seg(0x51, ctxb)}); err == nil {
		t.Error("a dump of another QP decoded")
	}
	if _, err := FromRawQP(kernel.RawResource{Kind: kernel.ResMR}); err == nil {
		t.Error("an MR decoded as a QP")
	}
	mp, _ := db.Plan("mkc")
	mb := mp.NewBuffer()
	mp.Encode(mb, []prm.Assignment{{Path: "mkey_7_0", Value: "0x33"}, {Path: "rr", Value: "1"}, {Path: "len", Value: "4096"}})
	m, err := FromRawMR(kernel.RawResource{Kind: kernel.ResMR, ID: 4, LKey: 0x1233, Raw: seg(0x12, mb)})
	if err != nil || m.Key != 0x1233 || !m.RemoteRead || m.Length != 4096 {
		t.Errorf("MR from raw: %+v %v", m, err)
	}
}

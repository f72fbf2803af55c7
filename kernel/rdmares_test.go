package kernel

import (
	"bytes"
	"encoding/binary"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mdlayher/netlink"

	"github.com/cxray/cxray/prm/ifc"
)

// The numbers are the installed uAPI header's.
func TestRDMANetlinkNumbers(t *testing.T) {
	const hdr = "/usr/include/rdma/rdma_netlink.h"
	src, err := os.ReadFile(hdr)
	if err != nil {
		t.Skipf("SKIPPED: no %s to check the RDMA netlink numbers against (apt-get install linux-libc-dev)", hdr)
	}
	es, err := ifc.ScanEnums(hdr, src)
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]int64{
		"RDMA_NL_NLDEV": rdmaNLNLDev, "RDMA_NLDEV_CMD_RES_QP_GET_RAW": nldevCmdResQPGetRaw, "RDMA_NLDEV_CMD_RES_CQ_GET_RAW": nldevCmdResCQGetRaw,
		"RDMA_NLDEV_CMD_RES_MR_GET_RAW": nldevCmdResMRGetRaw, "RDMA_NLDEV_ATTR_DEV_INDEX": nldevAttrDevIndex, "RDMA_NLDEV_ATTR_DEV_NAME": nldevAttrDevName,
		"RDMA_NLDEV_ATTR_PORT_INDEX": nldevAttrPortIndex, "RDMA_NLDEV_ATTR_RES_QP": nldevAttrResQP, "RDMA_NLDEV_ATTR_RES_QP_ENTRY": nldevAttrResQPEntry,
		"RDMA_NLDEV_ATTR_RES_LQPN": nldevAttrResLQPN, "RDMA_NLDEV_ATTR_RES_CQ": nldevAttrResCQ, "RDMA_NLDEV_ATTR_RES_CQ_ENTRY": nldevAttrResCQEntry,
		"RDMA_NLDEV_ATTR_RES_MR": nldevAttrResMR, "RDMA_NLDEV_ATTR_RES_MR_ENTRY": nldevAttrResMREntry, "RDMA_NLDEV_ATTR_RES_LKEY": nldevAttrResLKey,
		"RDMA_NLDEV_ATTR_RES_CQN": nldevAttrResCQN, "RDMA_NLDEV_ATTR_RES_MRN": nldevAttrResMRN, "RDMA_NLDEV_ATTR_RES_RAW": nldevAttrResRaw,
	} {
		if got, ok := ifc.Lookup(es, name); !ok || got != v {
			t.Errorf("%s = %d (found %v), cxray uses %d", name, got, ok, v)
		}
	}
	if RawOp(ResQP) != 5<<10|19 {
		t.Errorf("QP raw op %d", RawOp(ResQP))
	}
}

// segment builds one resource-dump segment.
func segment(typ uint16, body []byte) []byte {
	b := make([]byte, 4+len(body))
	binary.BigEndian.PutUint32(b, uint32(len(b)/4)<<16|uint32(typ))
	copy(b[4:], body)
	return b
}

func resourceSegment(typ uint16, index1 uint32, payload []byte) []byte {
	body := make([]byte, 12+len(payload))
	binary.BigEndian.PutUint32(body[4:], index1)
	copy(body[12:], payload)
	return segment(typ, body)
}

func encodeEntry(t *testing.T, kind ResKind, id uint32, raw []byte) []byte {
	_, _, idAttr := kind.attrs()
	ae := netlink.NewAttributeEncoder()
	ae.Uint32(idAttr, id)
	if kind == ResMR {
		ae.Uint32(nldevAttrResLKey, id<<8|0x33)
	}
	ae.Bytes(nldevAttrResRaw, raw)
	b, err := ae.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseRawResources(t *testing.T) {
	ctxA := bytes.Repeat([]byte{0xa5}, 0xe8)
	dump := append(append(segment(0xfffe, make([]byte, 12)), resourceSegment(0x1234, 0x108, ctxA)...), segment(0xffff, nil)...)
	dump = append(dump, make([]byte, 16)...) // the driver's zeroed tail
	// A request for one QP: its attributes at the top level.
	one := netlink.NewAttributeEncoder()
	one.Uint32(nldevAttrDevIndex, 3)
	one.String(nldevAttrDevName, "mlx5_0")
	one.Uint32(nldevAttrPortIndex, 1)
	one.Uint32(nldevAttrResLQPN, 0x108)
	one.Bytes(nldevAttrResRaw, dump)
	b1, _ := one.Encode()
	// A dump of MRs: entries nested in a list.
	list := netlink.NewAttributeEncoder()
	list.Uint32(nldevAttrDevIndex, 3)
	list.Nested(nldevAttrResMR, func(ae *netlink.AttributeEncoder) error {
		ae.Bytes(nldevAttrResMREntry, encodeEntry(t, ResMR, 7, []byte{1, 2, 3, 4}))
		ae.Bytes(nldevAttrResMREntry, encodeEntry(t, ResMR, 9, []byte{5, 6, 7, 8}))
		return nil
	})
	b2, _ := list.Encode()
	msgs := []netlink.Message{
		{Header: netlink.Header{Type: RawOp(ResQP)}, Data: b1},
		{Header: netlink.Header{Type: netlink.Done}},
	}
	got, err := ParseRawResources(ResQP, msgs)
	if err != nil {
		t.Fatal(err)
	}
	want := []RawResource{{Kind: ResQP, ID: 0x108, DevIndex: 3, DevName: "mlx5_0", Port: 1, Raw: dump}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("QP (-want +got):\n%s", d)
	}
	p, err := ObjectPayload(got[0].Raw, 0x108)
	if err != nil || !bytes.Equal(p, ctxA) {
		t.Errorf("payload %x %v", p, err)
	}
	if _, err := ObjectPayload(got[0].Raw, 0x999); err == nil {
		t.Error("a missing object was found")
	}
	mrs, err := ParseRawResources(ResMR, []netlink.Message{{Header: netlink.Header{Type: RawOp(ResMR)}, Data: b2}})
	if err != nil || len(mrs) != 2 || mrs[1].ID != 9 || mrs[1].DumpIndex() != 9 || mrs[1].LKey != 0x933 || !bytes.Equal(mrs[1].Raw, []byte{5, 6, 7, 8}) || mrs[0].DevIndex != 3 {
		t.Errorf("MRs %+v %v", mrs, err)
	}
	for _, bad := range [][]byte{{1, 0}, {8, 0, 0x55, 0, 0, 0}, {3, 0, 1, 0}} {
		if _, err := ParseRawResources(ResQP, []netlink.Message{{Header: netlink.Header{Type: RawOp(ResQP)}, Data: bad}}); err == nil {
			t.Errorf("malformed attributes %x parsed", bad)
		}
	}
	for _, bad := range [][]byte{{0, 0, 0, 1}, {0, 9, 0, 1, 0, 0, 0, 0}, {0, 1, 0}} {
		if _, err := DumpSegments(bad); err == nil {
			t.Errorf("malformed dump %x parsed", bad)
		}
	}
}

// FuzzRawResources: the parsers never panic; a dump's segments re-encode
// to the bytes they were read from; and a raw reply built from any id and
// bytes reads back as exactly those.
//
//	go test -fuzz=FuzzRawResources ./kernel
func FuzzRawResources(f *testing.F) {
	f.Add([]byte{}, uint32(0), []byte{})
	f.Add(append(resourceSegment(1, 5, []byte{1, 2, 3, 4}), segment(0xffff, nil)...), uint32(5), []byte{9})
	f.Add([]byte{0, 2, 0, 1, 0, 0}, uint32(1), []byte{0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, raw []byte, id uint32, attrs []byte) {
		if segs, err := DumpSegments(raw); err == nil {
			var back []byte
			for _, s := range segs {
				back = append(back, segment(s.Type, s.Body)...)
			}
			if !bytes.Equal(back, raw[:len(back)]) || !allZero(raw[len(back):]) {
				t.Fatalf("segments of %x re-encode to %x", raw, back)
			}
			if p, err := ObjectPayload(raw, id); err == nil && len(p) > len(raw) {
				t.Fatalf("payload longer than the dump")
			}
		}
		_, _ = ParseRawResources(ResCQ, []netlink.Message{{Header: netlink.Header{Type: RawOp(ResCQ)}, Data: attrs}})
		ae := netlink.NewAttributeEncoder()
		ae.Uint32(nldevAttrResCQN, id)
		ae.Bytes(nldevAttrResRaw, raw)
		b, err := ae.Encode()
		if err != nil {
			return // too large for one attribute
		}
		got, err := ParseRawResources(ResCQ, []netlink.Message{{Header: netlink.Header{Type: RawOp(ResCQ)}, Data: b}})
		if err != nil || len(got) != 1 || got[0].ID != id || !bytes.Equal(got[0].Raw, raw) {
			t.Fatalf("round trip of id %d, %d bytes: %+v %v", id, len(raw), got, err)
		}
	})
}

package kernel

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/mdlayher/netlink"
)

// Raw RDMA resources: where fwctl is missing, the RDMA netlink interface
// still hands out a QP's, CQ's or MR's firmware context as raw bytes
// (`rdma resource show qp -r`, Linux 5.15+, CAP_NET_ADMIN). This file
// parses those replies; objects.DecodeQPBytes and DecodeMKeyBytes decode
// the contexts they carry.
//
// Facts (include/uapi/rdma/rdma_netlink.h; checked by the tests against
// the installed header): the netlink family NETLINK_RDMA, client NLDEV (5),
// message type client<<10 | op, the raw GET ops, and the attributes below.
// For mlx5 (drivers/infiniband/hw/mlx5/restrack.c) RDMA_NLDEV_ATTR_RES_RAW
// holds a resource dump (drivers/net/ethernet/mellanox/mlx5/core/diag/
// rsc_dump.c): a run of segments, each a dword header (length in dwords,
// segment type) then its body, in the layouts mlx5_ifc.h gives
// (resource_dump_segment_header, resource_dump_resource_segment); the
// resource segment carries the object's index and its PRM_QUERY_* payload.
const (
	rdmaNLNLDev = 5 // RDMA_NL_NLDEV

	nldevCmdResQPGetRaw = 19 // RDMA_NLDEV_CMD_RES_QP_GET_RAW
	nldevCmdResCQGetRaw = 20 // RDMA_NLDEV_CMD_RES_CQ_GET_RAW
	nldevCmdResMRGetRaw = 21 // RDMA_NLDEV_CMD_RES_MR_GET_RAW

	nldevAttrDevIndex   = 1  // RDMA_NLDEV_ATTR_DEV_INDEX, u32
	nldevAttrDevName    = 2  // RDMA_NLDEV_ATTR_DEV_NAME, string
	nldevAttrPortIndex  = 3  // RDMA_NLDEV_ATTR_PORT_INDEX, u32
	nldevAttrResQP      = 19 // RDMA_NLDEV_ATTR_RES_QP, nested entries
	nldevAttrResQPEntry = 20 // RDMA_NLDEV_ATTR_RES_QP_ENTRY, nested
	nldevAttrResLQPN    = 21 // RDMA_NLDEV_ATTR_RES_LQPN, u32
	nldevAttrResCQ      = 35 // RDMA_NLDEV_ATTR_RES_CQ
	nldevAttrResCQEntry = 36 // RDMA_NLDEV_ATTR_RES_CQ_ENTRY
	nldevAttrResMR      = 40 // RDMA_NLDEV_ATTR_RES_MR
	nldevAttrResMREntry = 41 // RDMA_NLDEV_ATTR_RES_MR_ENTRY
	nldevAttrResLKey    = 43 // RDMA_NLDEV_ATTR_RES_LKEY, u32
	nldevAttrResCQN     = 61 // RDMA_NLDEV_ATTR_RES_CQN, u32
	nldevAttrResMRN     = 62 // RDMA_NLDEV_ATTR_RES_MRN, u32
	nldevAttrResRaw     = 85 // RDMA_NLDEV_ATTR_RES_RAW, binary
)

// ResKind is the kind of RDMA resource.
type ResKind int

// Resource kinds.
const (
	ResQP ResKind = iota
	ResCQ
	ResMR
)

func (k ResKind) String() string { return [...]string{"qp", "cq", "mr"}[k] }

// rdmaMsgType is RDMA_NL_GET_TYPE(client, op).
func rdmaMsgType(op int) netlink.HeaderType { return netlink.HeaderType(rdmaNLNLDev<<10 | op) }

// RawOp returns the netlink message type that asks for a kind's raw
// contexts.
func RawOp(k ResKind) netlink.HeaderType {
	return rdmaMsgType([...]int{nldevCmdResQPGetRaw, nldevCmdResCQGetRaw, nldevCmdResMRGetRaw}[k])
}

// RawResource is one object's raw context as the kernel returned it.
type RawResource struct {
	Kind ResKind
	// ID is the QPN, CQN or MR number (the kernel's resource number of
	// the MR; its key is LKey).
	ID uint32
	// LKey is an MR's local key (the resource dump names the MR by the
	// key's index, LKey >> 8).
	LKey uint32
	// Device and Port are what the reply names (0 / "" when absent).
	DevIndex uint32
	DevName  string
	Port     uint32
	// Raw is RDMA_NLDEV_ATTR_RES_RAW: the driver's bytes.
	Raw []byte
}

// kind's attribute numbers: the list, its entries, the object number.
func (k ResKind) attrs() (list, entry, id uint16) {
	switch k {
	case ResCQ:
		return nldevAttrResCQ, nldevAttrResCQEntry, nldevAttrResCQN
	case ResMR:
		return nldevAttrResMR, nldevAttrResMREntry, nldevAttrResMRN
	}
	return nldevAttrResQP, nldevAttrResQPEntry, nldevAttrResLQPN
}

// maxRawEntries bounds what one reply may list.
const maxRawEntries = 1 << 16

// ParseRawResources reads the replies to a raw GET: a request for one
// object answers its attributes at the top level, a dump nests them in a
// list of entries; both are read. Messages of other types (done, errors
// the caller handled) are skipped.
func ParseRawResources(kind ResKind, msgs []netlink.Message) ([]RawResource, error) {
	list, entry, idAttr := kind.attrs()
	want := RawOp(kind)
	var out []RawResource
	for i, m := range msgs {
		if m.Header.Type != want {
			continue
		}
		top := RawResource{Kind: kind}
		var entries [][]byte
		flat := false
		err := walkAttrs(m.Data, func(typ uint16, b []byte) error {
			switch typ {
			case nldevAttrDevIndex:
				top.DevIndex = u32(b)
			case nldevAttrDevName:
				top.DevName = cstring(b)
			case nldevAttrPortIndex:
				top.Port = u32(b)
			case list:
				return walkAttrs(b, func(t uint16, e []byte) error {
					if t == entry {
						if len(entries) >= maxRawEntries {
							return errors.New("too many entries")
						}
						entries = append(entries, e)
					}
					return nil
				})
			default:
				flat = true
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("kernel: RDMA raw %s reply %d: %v", kind, i, err)
		}
		if flat {
			entries = append(entries, m.Data)
		}
		for _, e := range entries {
			r := RawResource{Kind: kind, DevIndex: top.DevIndex, DevName: top.DevName, Port: top.Port}
			found := false
			err := walkAttrs(e, func(typ uint16, b []byte) error {
				switch typ {
				case idAttr:
					r.ID = u32(b)
				case nldevAttrResLKey:
					r.LKey = u32(b)
				case nldevAttrPortIndex:
					r.Port = u32(b)
				case nldevAttrResRaw:
					r.Raw, found = append([]byte(nil), b...), true
				}
				return nil
			})
			if err != nil {
				return nil, fmt.Errorf("kernel: RDMA raw %s reply %d: %v", kind, i, err)
			}
			if found {
				out = append(out, r)
			}
		}
	}
	return out, nil
}

// walkAttrs calls fn for each netlink attribute of b (type without the
// nested and byte-order flags).
func walkAttrs(b []byte, fn func(typ uint16, data []byte) error) error {
	for len(b) > 0 {
		if len(b) < 4 {
			return fmt.Errorf("%d bytes left, too few for an attribute header", len(b))
		}
		n := int(binary.NativeEndian.Uint16(b))
		typ := binary.NativeEndian.Uint16(b[2:]) & 0x3fff
		if n < 4 || n > len(b) {
			return fmt.Errorf("attribute %d claims %d bytes of %d", typ, n, len(b))
		}
		if err := fn(typ, b[4:n]); err != nil {
			return err
		}
		adv := (n + 3) &^ 3
		if adv > len(b) {
			adv = len(b)
		}
		b = b[adv:]
	}
	return nil
}

func u32(b []byte) uint32 {
	if len(b) < 4 {
		return 0
	}
	return binary.NativeEndian.Uint32(b)
}

func cstring(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// DumpSegment is one segment of an mlx5 resource dump.
type DumpSegment struct {
	Type uint16
	// Body is the segment after its one-dword header.
	Body []byte
}

// Index1 and Payload read a resource segment (resource_dump_resource_
// segment: a reserved dword, index1, index2, then the payload).
func (s DumpSegment) Index1() (uint32, bool) {
	if len(s.Body) < 12 {
		return 0, false
	}
	return binary.BigEndian.Uint32(s.Body[4:]), true
}

// Payload is the body after index1 and index2.
func (s DumpSegment) Payload() []byte {
	if len(s.Body) < 12 {
		return nil
	}
	return s.Body[12:]
}

// maxSegments bounds a dump (the driver caps one at 1024 bytes).
const maxSegments = 4096

// DumpSegments splits an mlx5 resource dump into its segments. Each header
// is big-endian: length_dw (the segment's size in dwords, header included)
// in bits 31..16, segment_type in 15..0. A length of zero or past the end
// is an error (the bytes are not a dump); trailing zeros after the last
// segment (the driver's zeroed buffer) are allowed.
func DumpSegments(raw []byte) ([]DumpSegment, error) {
	var out []DumpSegment
	for off := 0; off < len(raw); {
		if len(raw)-off < 4 {
			return nil, fmt.Errorf("kernel: resource dump: %d bytes left at offset 0x%x, too few for a segment header", len(raw)-off, off)
		}
		h := binary.BigEndian.Uint32(raw[off:])
		if h == 0 && allZero(raw[off:]) {
			break
		}
		n := int(h>>16) * 4
		if n == 0 || off+n > len(raw) {
			return nil, fmt.Errorf("kernel: resource dump: segment at offset 0x%x is %d bytes, %d are left; these bytes are not an mlx5 resource dump", off, n, len(raw)-off)
		}
		if len(out) >= maxSegments {
			return nil, fmt.Errorf("kernel: resource dump: more than %d segments", maxSegments)
		}
		out = append(out, DumpSegment{Type: uint16(h), Body: raw[off+4 : off+n]})
		off += n
	}
	return out, nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// DumpIndex is the index the resource dump names an object by: the QPN or
// CQN, an MR's key index.
func (r RawResource) DumpIndex() uint32 {
	if r.Kind == ResMR {
		return r.LKey >> 8
	}
	return r.ID
}

// ObjectPayload returns the payload of the dump's resource segment for
// object id (index1 == id). The segment type numbers are the firmware's
// own (the driver learns them from a menu the dump does not carry), so
// the segment is found by its index. With several candidates the longest
// is taken.
func ObjectPayload(raw []byte, id uint32) ([]byte, error) {
	segs, err := DumpSegments(raw)
	if err != nil {
		return nil, err
	}
	var best []byte
	for _, s := range segs {
		if i, ok := s.Index1(); ok && i == id && len(s.Payload()) > len(best) {
			best = s.Payload()
		}
	}
	if best == nil {
		return nil, fmt.Errorf("kernel: resource dump: no segment for object 0x%x among %d segments", id, len(segs))
	}
	return best, nil
}

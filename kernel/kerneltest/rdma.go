package kerneltest

import (
	"encoding/binary"

	"github.com/mdlayher/netlink"
	"github.com/mdlayher/netlink/nltest"

	"github.com/cxray/cxray/internal/linuxabi"
)

// RDMA netlink numbers (include/uapi/rdma/rdma_netlink.h; TestRDMANumbers
// checks them against the installed header).
const (
	RDMA_NL_NLDEV                 = 5
	RDMA_NLDEV_CMD_GET            = 1
	RDMA_NLDEV_CMD_RES_QP_GET_RAW = 19
	RDMA_NLDEV_CMD_RES_MR_GET_RAW = 21
	RDMA_NLDEV_ATTR_DEV_INDEX     = 1
	RDMA_NLDEV_ATTR_DEV_NAME      = 2
	RDMA_NLDEV_ATTR_RES_QP        = 19
	RDMA_NLDEV_ATTR_RES_QP_ENTRY  = 20
	RDMA_NLDEV_ATTR_RES_LQPN      = 21
	RDMA_NLDEV_ATTR_RES_MR        = 40
	RDMA_NLDEV_ATTR_RES_MR_ENTRY  = 41
	RDMA_NLDEV_ATTR_RES_LKEY      = 43
	RDMA_NLDEV_ATTR_RES_MRN       = 62
	RDMA_NLDEV_ATTR_RES_RAW       = 85
)

// RDMADevice is what fake RDMA netlink says about one RDMA device: its
// index and the raw contexts of its QPs and MRs, in the kernel's order.
type RDMADevice struct {
	Index uint32
	QPs   []RawObject
	MRs   []RawObject
}

// RawObject is one object's raw resource: its number (QPN, or the MR's
// kernel number), an MR's local key, and the driver's bytes (a resource
// dump; ResourceSegment builds one).
type RawObject struct {
	ID, LKey uint32
	Raw      []byte
}

// ResourceSegment is an mlx5 resource dump of one resource segment
// (mlx5_ifc.h resource_dump_segment_header, resource_dump_resource_
// segment): the header dword (length in dwords, segment type), a reserved
// dword, index1, index2, then the object's context.
func ResourceSegment(segType uint16, index1 uint32, payload []byte) []byte {
	b := make([]byte, 16+len(payload)+(4-len(payload)%4)%4)
	binary.BigEndian.PutUint32(b, uint32(len(b)/4)<<16|uint32(segType))
	binary.BigEndian.PutUint32(b[8:], index1)
	copy(b[16:], payload)
	return b
}

func rdmaType(op int) netlink.HeaderType { return netlink.HeaderType(RDMA_NL_NLDEV<<10 | op) }

// DialRDMA is a kernel.Options.DialRDMA: the RDMA devices of k.RDMA and
// their raw QPs and MRs, one by number or a dump; raw requests fail with
// EPERM under NoCapNetAdmin, as the kernel refuses them without
// CAP_NET_ADMIN.
func (k *Kernel) DialRDMA() (*netlink.Conn, error) {
	return nltest.Dial(k.serveRDMA), nil
}

func (k *Kernel) serveRDMA(reqs []netlink.Message) ([]netlink.Message, error) {
	req := reqs[0]
	h := func(f netlink.HeaderFlags) netlink.Header {
		return netlink.Header{Type: req.Header.Type, Flags: f, Sequence: req.Header.Sequence, PID: req.Header.PID}
	}
	done := netlink.Message{Header: netlink.Header{Type: netlink.Done, Flags: netlink.Multi, Sequence: req.Header.Sequence, PID: req.Header.PID}, Data: make([]byte, 4)}
	if req.Header.Type == rdmaType(RDMA_NLDEV_CMD_GET) {
		var out []netlink.Message
		for name, d := range k.RDMA {
			ae := netlink.NewAttributeEncoder()
			ae.Uint32(RDMA_NLDEV_ATTR_DEV_INDEX, d.Index)
			ae.String(RDMA_NLDEV_ATTR_DEV_NAME, name)
			b, err := ae.Encode()
			if err != nil {
				return nil, err
			}
			out = append(out, netlink.Message{Header: h(netlink.Multi), Data: b})
		}
		return append(out, done), nil
	}
	var qp bool
	switch req.Header.Type {
	case rdmaType(RDMA_NLDEV_CMD_RES_QP_GET_RAW):
		qp = true
	case rdmaType(RDMA_NLDEV_CMD_RES_MR_GET_RAW):
	default:
		return nil, linuxabi.EOPNOTSUPP
	}
	if k.NoCapNetAdmin {
		return nil, linuxabi.EPERM
	}
	ad, err := netlink.NewAttributeDecoder(req.Data)
	if err != nil {
		return nil, err
	}
	var idx, lqpn uint32
	var one bool
	for ad.Next() {
		switch ad.Type() {
		case RDMA_NLDEV_ATTR_DEV_INDEX:
			idx = ad.Uint32()
		case RDMA_NLDEV_ATTR_RES_LQPN:
			lqpn, one = ad.Uint32(), true
		}
	}
	var dev *RDMADevice
	for _, d := range k.RDMA {
		if d.Index == idx {
			dev = &d
		}
	}
	if dev == nil {
		return nil, linuxabi.ENODEV
	}
	objs, list, entry, idAttr := dev.MRs, uint16(RDMA_NLDEV_ATTR_RES_MR), uint16(RDMA_NLDEV_ATTR_RES_MR_ENTRY), uint16(RDMA_NLDEV_ATTR_RES_MRN)
	if qp {
		objs, list, entry, idAttr = dev.QPs, RDMA_NLDEV_ATTR_RES_QP, RDMA_NLDEV_ATTR_RES_QP_ENTRY, RDMA_NLDEV_ATTR_RES_LQPN
	}
	attrs := func(ae *netlink.AttributeEncoder, o RawObject) {
		ae.Uint32(idAttr, o.ID)
		if !qp {
			ae.Uint32(RDMA_NLDEV_ATTR_RES_LKEY, o.LKey)
		}
		ae.Bytes(RDMA_NLDEV_ATTR_RES_RAW, o.Raw)
	}
	if one {
		for _, o := range objs {
			if o.ID == lqpn {
				ae := netlink.NewAttributeEncoder()
				ae.Uint32(RDMA_NLDEV_ATTR_DEV_INDEX, idx)
				attrs(ae, o)
				b, err := ae.Encode()
				return []netlink.Message{{Header: h(0), Data: b}}, err
			}
		}
		return nil, linuxabi.ENOENT
	}
	// A dump: the entries nested in the device's list, one message.
	ae := netlink.NewAttributeEncoder()
	ae.Uint32(RDMA_NLDEV_ATTR_DEV_INDEX, idx)
	ae.Nested(list, func(nae *netlink.AttributeEncoder) error {
		for _, o := range objs {
			nae.Nested(entry, func(eae *netlink.AttributeEncoder) error {
				attrs(eae, o)
				return nil
			})
		}
		return nil
	})
	b, err := ae.Encode()
	if err != nil {
		return nil, err
	}
	return []netlink.Message{{Header: h(netlink.Multi), Data: b}, done}, nil
}

package kernel

import (
	"context"
	"fmt"

	"github.com/mdlayher/netlink"
)

// netlinkRDMA is NETLINK_RDMA (include/uapi/linux/netlink.h).
const netlinkRDMA = 20

// nldevCmdGet is RDMA_NLDEV_CMD_GET: the RDMA devices, with their index
// and name.
const nldevCmdGet = 1

func dialRDMA() (*netlink.Conn, error) { return netlink.Dial(netlinkRDMA, nil) }

// RawResource asks the RDMA netlink interface for one object's raw
// firmware context (`rdma resource show qp lqpn N -r`): the kernel's own
// copy, where fwctl is missing. id is the QPN or CQN; for an MR it is the
// memory key, which the kernel lists beside its own MR number, so the
// device's raw MRs are dumped and the one with that local key is taken.
// It needs CAP_NET_ADMIN (*PermissionError) and Linux 5.15 or newer.
func (d *Device) RawResource(ctx context.Context, kind ResKind, id uint32) (*RawResource, error) {
	what := fmt.Sprintf("raw context of %s 0x%x on %s", kind, id, d.RDMA)
	rs, err := d.rawResources(ctx, kind, id, kind != ResMR, what)
	if err != nil {
		return nil, err
	}
	for i := range rs {
		if kind == ResMR && rs[i].LKey == id || kind != ResMR && rs[i].ID == id {
			return &rs[i], nil
		}
	}
	return nil, &NotFoundError{fmt.Sprintf("kernel: %s: the kernel answered no such object", what)}
}

// RawResources dumps the raw contexts of every object of a kind the
// kernel tracks on the function's RDMA device (`rdma resource show qp -r`),
// in the kernel's order; at most maxRawEntries per reply.
func (d *Device) RawResources(ctx context.Context, kind ResKind) ([]RawResource, error) {
	return d.rawResources(ctx, kind, 0, false, fmt.Sprintf("raw %s contexts on %s", kind, d.RDMA))
}

// rawResources sends a raw GET for one object (one, with its id) or a dump
// of the device's objects of kind.
func (d *Device) rawResources(ctx context.Context, kind ResKind, id uint32, one bool, what string) ([]RawResource, error) {
	if d.RDMA == "" {
		return nil, &UnsupportedError{What: "raw RDMA contexts", Msg: "this function has no RDMA device (mlx5_ib is not bound)"}
	}
	dial := d.opts.DialRDMA
	if dial == nil {
		dial = dialRDMA
	}
	c, err := dial()
	if err != nil {
		return nil, fmt.Errorf("kernel: opening an RDMA netlink socket: %v", err)
	}
	stop := bindContext(ctx, c.SetDeadline)
	defer func() { stop(); c.Close() }()
	idx, err := rdmaIndex(ctx, c, d.RDMA)
	if err != nil {
		return nil, err
	}
	_, _, idAttr := kind.attrs()
	ae := netlink.NewAttributeEncoder()
	ae.Uint32(nldevAttrDevIndex, idx)
	flags := netlink.Request
	if one {
		ae.Uint32(idAttr, id)
	} else {
		flags |= netlink.Dump
	}
	body, err := ae.Encode()
	if err != nil {
		return nil, fmt.Errorf("kernel: encoding the raw %s request: %v", kind, err)
	}
	msgs, err := c.Execute(netlink.Message{Header: netlink.Header{Type: RawOp(kind), Flags: flags}, Data: body})
	if err != nil {
		return nil, netlinkErr(ctx, what, err, "")
	}
	return ParseRawResources(kind, msgs)
}

// rdmaIndex finds an RDMA device's index by its name (RDMA_NLDEV_CMD_GET
// dump).
func rdmaIndex(ctx context.Context, c *netlink.Conn, name string) (uint32, error) {
	msgs, err := c.Execute(netlink.Message{Header: netlink.Header{Type: rdmaMsgType(nldevCmdGet), Flags: netlink.Request | netlink.Dump}})
	if err != nil {
		return 0, netlinkErr(ctx, "RDMA devices", err, "")
	}
	for _, m := range msgs {
		var idx uint32
		var dev string
		walkAttrs(m.Data, func(typ uint16, b []byte) error {
			switch typ {
			case nldevAttrDevIndex:
				idx = u32(b)
			case nldevAttrDevName:
				dev = cstring(b)
			}
			return nil
		})
		if dev == name {
			return idx, nil
		}
	}
	return 0, &NotFoundError{fmt.Sprintf("kernel: RDMA device %s is not in the kernel's list (removed, or in another network namespace)", name)}
}

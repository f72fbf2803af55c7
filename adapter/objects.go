package adapter

import (
	"context"

	"github.com/cxray/cxray/kernel"
)

// RawObject is an RDMA object's raw firmware context as the kernel keeps
// it (RDMA netlink, `rdma resource show ... -r`), for functions whose
// command interface is out of reach (no fwctl, the kernel backend). id is
// a QPN, or for kernel.ResMR a memory key.
func (a *Adapter) RawObject(ctx context.Context, kind kernel.ResKind, id uint32) (*kernel.RawResource, error) {
	k := a.Kernel()
	if k == nil {
		return nil, &UnsupportedError{What: "raw RDMA contexts", Backend: a.c.Backend,
			Why: "cxray has no kernel view of this function (the kernel driver does not bind it, or it is emulated)"}
	}
	return k.RawResource(ctx, kind, id)
}

// ObjectLister is an OS view that knows a function's RDMA objects by
// number, as a host kernel's resource tracking does (`rdma resource show
// qp`): the emulator's. Their contexts are then read through the command
// interface.
type ObjectLister interface {
	// RDMAObjects lists the QPNs (kernel.ResQP) or memory keys
	// (kernel.ResMR) of the function.
	RDMAObjects(ctx context.Context, kind kernel.ResKind) ([]uint32, error)
}

// ObjectIDs lists the numbers of the function's RDMA objects of a kind
// (QPNs, whole memory keys) as its OS view knows them; ok is false when
// the view cannot list them by number (then RawObjects may).
func (a *Adapter) ObjectIDs(ctx context.Context, kind kernel.ResKind) (ids []uint32, ok bool, err error) {
	l, ok := a.os.(ObjectLister)
	if !ok {
		return nil, false, nil
	}
	ids, err = l.RDMAObjects(ctx, kind)
	return ids, true, err
}

// RawObjects is every raw firmware context of a kind that the kernel
// keeps for the function (RDMA netlink dump, `rdma resource show qp -r`).
func (a *Adapter) RawObjects(ctx context.Context, kind kernel.ResKind) ([]kernel.RawResource, error) {
	k := a.Kernel()
	if k == nil {
		return nil, &UnsupportedError{What: "raw RDMA contexts", Backend: a.c.Backend,
			Why: "cxray has no kernel view of this function (the kernel driver does not bind it, or it is emulated)"}
	}
	return k.RawResources(ctx, kind)
}

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

package objects

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/kernel"
)

// maxObjects bounds a list: more than any driver keeps on one function
// before the list would be useless on a terminal anyway.
const maxObjects = 1 << 16

// ListQPs reads every QP of a function: where the function has a command
// interface and its OS lists the QPs by number (the emulator's view), the
// context of each through QUERY_QP; otherwise the kernel's raw copies
// (RDMA netlink dump, the kernel backend). QPs in an error state come
// first, then by QPN. A QP destroyed between the list and its query is
// left out.
func ListQPs(ctx context.Context, a *adapter.Adapter) ([]*QP, error) {
	var qps []*QP
	err := list(ctx, a, kernel.ResQP, func(d *dev.Device, id uint32) error {
		q, err := QueryQP(ctx, d, id)
		if err == nil {
			qps = append(qps, q)
		}
		return err
	}, func(r kernel.RawResource) error {
		q, err := FromRawQP(r)
		if err == nil {
			qps = append(qps, q)
		}
		return err
	})
	sort.SliceStable(qps, func(i, j int) bool {
		if qps[i].Error != qps[j].Error {
			return qps[i].Error
		}
		return qps[i].QPN < qps[j].QPN
	})
	return qps, err
}

// ListMKeys reads every memory key of a function, as ListQPs reads QPs,
// in key order.
func ListMKeys(ctx context.Context, a *adapter.Adapter) ([]*MKey, error) {
	var ms []*MKey
	err := list(ctx, a, kernel.ResMR, func(d *dev.Device, id uint32) error {
		m, err := QueryMKey(ctx, d, id)
		if err == nil {
			ms = append(ms, m)
		}
		return err
	}, func(r kernel.RawResource) error {
		m, err := FromRawMR(r)
		if err == nil {
			ms = append(ms, m)
		}
		return err
	})
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].Key < ms[j].Key })
	return ms, err
}

// list walks the objects of a kind through the command interface (query)
// or the kernel's raw copies (fromRaw); an error stops it.
func list(ctx context.Context, a *adapter.Adapter, kind kernel.ResKind, query func(*dev.Device, uint32) error, fromRaw func(kernel.RawResource) error) error {
	d, rerr := a.Registers(ctx)
	if rerr == nil && d.Commander() != nil {
		ids, ok, err := a.ObjectIDs(ctx, kind)
		if err != nil {
			return err
		}
		if ok {
			if len(ids) > maxObjects {
				ids = ids[:maxObjects]
			}
			for _, id := range ids {
				if err := ctx.Err(); err != nil {
					return err
				}
				if err := query(d, id); err != nil && !dev.IsNoSuchObject(err) {
					return fmt.Errorf("%s 0x%x: %w", kind, id, err)
				}
			}
			return nil
		}
	}
	if a.Kernel() == nil && rerr != nil && !errors.Is(rerr, adapter.ErrUnsupported) {
		return rerr // the register path's own failure (a held gateway) says more
	}
	rs, err := a.RawObjects(ctx, kind)
	if err != nil {
		return err
	}
	for i, r := range rs {
		if i == maxObjects {
			break
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fromRaw(r); err != nil {
			return err
		}
	}
	return nil
}

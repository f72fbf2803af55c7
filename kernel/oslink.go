package kernel

import "context"

// LinkByName asks rtnetlink about any interface of the machine, not only
// a ConnectX function's (osmac.System lists them all): its index and
// current and permanent hardware addresses. opts.DialRoute may inject a
// fake connection.
func LinkByName(ctx context.Context, name string, opts Options) (*Link, error) {
	return (&Device{opts: opts}).Link(ctx, name)
}

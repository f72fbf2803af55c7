package state

// lockType is what lockRange sets on a byte: a shared lock (readers of
// the state, held while a Log is open), an exclusive one, or none.
type lockType int

const (
	lockNone lockType = iota
	lockShared
	lockExclusive
)

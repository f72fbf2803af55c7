package emu

import "fmt"

// EventKind names what happened in an Event.
type EventKind uint8

// Event kinds. Config* are the raw calls; the others are what the device made
// of them.
const (
	EvConfigRead      EventKind = iota + 1 // one ReadAt call: Off, Size
	EvConfigWrite                          // one WriteAt call: Off, Size, Value (first ≤4 bytes, little-endian)
	EvSemTaken                             // gateway semaphore went from free to Value
	EvSemReleased                          // gateway semaphore freed; Value was the holder
	EvSpaceSelect                          // CTRL written selecting Space
	EvRead                                 // gateway read transaction: Space, Addr, Value
	EvWrite                                // gateway write transaction: Space, Addr, Value
	EvSyndrome                             // a transaction failed: Space, Addr, Value = syndrome code
	EvUnlocked                             // a transaction started while the gateway semaphore was free
	EvICMDSemTaken                         // ICMD semaphore (space 0xA, addr 0) taken by Value
	EvICMDSemReleased                      // ICMD semaphore freed; Value was the holder
	EvICMDStart                            // ICMD command started: Opcode
	EvICMDDone                             // ICMD command finished: Opcode, Status
	EvRegister                             // access register handled: RegID, Method, Status
)

var kindNames = [...]string{
	EvConfigRead: "config-read", EvConfigWrite: "config-write", EvSemTaken: "sem-taken",
	EvSemReleased: "sem-released", EvSpaceSelect: "space-select", EvRead: "read", EvWrite: "write",
	EvSyndrome: "syndrome", EvUnlocked: "unlocked-transaction", EvICMDSemTaken: "icmd-sem-taken",
	EvICMDSemReleased: "icmd-sem-released", EvICMDStart: "icmd-start", EvICMDDone: "icmd-done",
	EvRegister: "register",
}

func (k EventKind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return fmt.Sprintf("event(%d)", uint8(k))
}

// Event is one entry of the device's trace.
type Event struct {
	Kind   EventKind
	Off    int64 // config offset (Config*)
	Size   int   // bytes (Config*)
	Space  uint16
	Addr   uint32
	Value  uint32
	Opcode uint16
	Status uint8
	RegID  uint16
	Method Method
}

func (e Event) String() string {
	switch e.Kind {
	case EvConfigRead, EvConfigWrite:
		return fmt.Sprintf("%s 0x%x+%d", e.Kind, e.Off, e.Size)
	case EvSpaceSelect:
		return fmt.Sprintf("%s 0x%x", e.Kind, e.Space)
	case EvRead, EvWrite, EvSyndrome, EvUnlocked:
		return fmt.Sprintf("%s space 0x%x addr 0x%x value 0x%x", e.Kind, e.Space, e.Addr, e.Value)
	case EvICMDStart:
		return fmt.Sprintf("%s opcode 0x%x", e.Kind, e.Opcode)
	case EvICMDDone:
		return fmt.Sprintf("%s opcode 0x%x status %d", e.Kind, e.Opcode, e.Status)
	case EvRegister:
		return fmt.Sprintf("%s 0x%04x %s status %d", e.Kind, e.RegID, e.Method, e.Status)
	}
	return fmt.Sprintf("%s 0x%x", e.Kind, e.Value)
}

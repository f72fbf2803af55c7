package nvconf

import "github.com/cxray/cxray/nvconf/tlv"

// The codec's names, kept here so that callers of nvconf read one package
// (the codec itself is nvconf/tlv; nvconf builds on it, never the reverse).

// MaxData is the most TLV data one NV access carries (tlv.MaxData).
const MaxData = tlv.MaxData

// HeaderSize is the size of the configuration-item header (tlv.HeaderSize).
const HeaderSize = tlv.HeaderSize

type (
	Class       = tlv.Class
	Mode        = tlv.Mode
	Header      = tlv.Header
	Fields      = tlv.Fields
	HeaderCodec = tlv.HeaderCodec
	TypeFields  = tlv.TypeFields
)

// Classes (tlv.Class).
const (
	ClassGlobal        = tlv.ClassGlobal
	ClassPort          = tlv.ClassPort
	ClassHostPF        = tlv.ClassHostPF
	ClassFile          = tlv.ClassFile
	ClassHost          = tlv.ClassHost
	ClassSwitchGlobal  = tlv.ClassSwitchGlobal
	ClassModule        = tlv.ClassModule
	ClassPortCommon    = tlv.ClassPortCommon
	ClassHostAllFn     = tlv.ClassHostAllFn
	ClassAllHostsFn    = tlv.ClassAllHostsFn
	ClassAllHostsAllFn = tlv.ClassAllHostsAllFn
)

// Access modes and writer IDs (tlv.Mode, tlv.Writer*).
const (
	ModeNext    = tlv.ModeNext
	ModeCurrent = tlv.ModeCurrent
	ModeFactory = tlv.ModeFactory

	WriterUnspecified     = tlv.WriterUnspecified
	WriterICMD            = tlv.WriterICMD
	WriterMlxconfig       = tlv.WriterMlxconfig
	WriterUser1           = tlv.WriterUser1
	WriterMlxconfigSetRaw = tlv.WriterMlxconfigSetRaw
)

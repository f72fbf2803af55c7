package nvconf

import "github.com/cxray/cxray/nvconf/rawfile"

// The file format's names, kept here so that callers of nvconf read one
// package (the raw format itself is nvconf/rawfile).

// RawTLV is one stored TLV: its header and data, as a backup holds it.
type RawTLV = rawfile.TLV

// Diff is how two sets of TLVs differ (rawfile.Compare).
type Diff = rawfile.Diff

// FileError reports a malformed backup or raw file (rawfile.FileError).
type FileError = rawfile.FileError

// Kinds of refused files, the raw file's signature and the limits on files
// read (rawfile).
const (
	FileTruncated    = rawfile.FileTruncated
	FileCorrupt      = rawfile.FileCorrupt
	FileForeign      = rawfile.FileForeign
	RawFileSignature = rawfile.RawFileSignature
	MaxFileSize      = rawfile.MaxFileSize
	MaxFileTLVs      = rawfile.MaxFileTLVs
)

package adb

// Tiny is the small database of the unit tests, for the external fuzz test.
const Tiny = tiny

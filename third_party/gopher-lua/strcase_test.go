package lua

import "testing"

// TestUpperLowerChangeASCIILettersOnly: string.upper and string.lower change a-z and A-Z
// alone, as Cobalt's StringLib: CC's Latin-1 byte for ü (252) and a UTF-8 é pass unchanged,
// where Go's strings.ToUpper made "K\xfcche" "K\uFFFDCHE" and "é" "É".
func TestUpperLowerChangeASCIILettersOnly(t *testing.T) {
	L := NewState()
	defer L.Close()
	if err := L.DoString("up, low = (\"K\\252che \\195\\169!\"):upper(), (\"K\\220CHE \\195\\137!\"):lower()"); err != nil {
		t.Fatal(err)
	}
	if got, want := L.GetGlobal("up").String(), "K\xfcCHE \xc3\xa9!"; got != want {
		t.Errorf("upper: %q, want %q", got, want)
	}
	if got, want := L.GetGlobal("low").String(), "k\xdcche \xc3\x89!"; got != want {
		t.Errorf("lower: %q, want %q", got, want)
	}
}

package report

import (
	"bytes"
	"testing"
)

func TestRate(t *testing.T) {
	tests := []struct {
		give float64
		want string
	}{
		{0, "0"}, {0.5, "0.5"}, {9.94, "9.9"}, {9.96, "10"}, {10, "10"}, {950.4, "950"}, {9999, "9999"},
		{9999.6, "10.0k"}, {12345, "12.3k"}, {999_949, "999.9k"}, {999_950, "1.00M"}, {1_000_000, "1.00M"},
		{123_456_789, "123.46M"},
	}
	for _, tt := range tests {
		if got := rate(tt.give); got != tt.want {
			t.Errorf("rate(%v) = %q, want %q", tt.give, got, tt.want)
		}
	}
}

func TestWriteWrapped(t *testing.T) {
	tests := []struct {
		give  string
		width int
		want  string
	}{
		{"eth0: RX softirq on CPU 27", 0, "eth0: RX softirq on CPU 27\n"},
		{"eth0: RX softirq on CPU 27", 26, "eth0: RX softirq on CPU 27\n"},
		{"eth0: RX softirq on CPU 27 — saturated", 20, "eth0: RX softirq on\n  CPU 27 — saturated\n"},
		{"averyveryverylongword x", 10, "averyvery~\n  x\n"},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		writeWrapped(&b, tt.give, tt.width)
		if b.String() != tt.want {
			t.Errorf("writeWrapped(%q, %d) = %q, want %q", tt.give, tt.width, b.String(), tt.want)
		}
	}
}

func TestFitTable(t *testing.T) {
	header := []string{"CPU", "WHY", "%SOFT"}
	rows := [][]string{{"53", "irq,thread,busy", "99"}}
	tests := []struct {
		width int
		want  string
	}{
		{0, "CPU  WHY              %SOFT\n53   irq,thread,busy  99\n"},
		{20, "CPU  %SOFT\n53   99\n"},
		{6, "CPU\n53\n"},
		{2, "C~\n53\n"},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		if err := fitTable(&b, header, rows, tt.width, []int{1, 2}); err != nil {
			t.Fatal(err)
		}
		if b.String() != tt.want {
			t.Errorf("fitTable(width %d) = %q, want %q", tt.width, b.String(), tt.want)
		}
	}
}

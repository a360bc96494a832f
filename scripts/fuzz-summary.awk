# Summarises one `go test -fuzz` log for scripts/fuzz.sh: the totals of the last progress line
# and the average rate while fuzzing.
#
# go test prints a progress line every 3 s ("fuzz: elapsed: 15s, execs: 41230 (0/sec), new
# interesting: 2 (total: 186)") and one more when fuzzing stops. Its "/sec" figure covers only
# the time since the previous line, so the closing line, which often comes right after a tick,
# says (0/sec). The rate here is the executions between the first and the last progress line
# over the seconds between them: executions counted before fuzzing began (the baseline run over
# the seed corpus) are left out.
#
#   awk -f scripts/fuzz-summary.awk LOG

# seconds turns a Go duration as go test prints it (15s, 1m12s, 1h0m0s) into seconds.
function seconds(d,   s, n, unit) {
	s = 0
	while (match(d, /^[0-9.]+[hms]/)) {
		n = substr(d, 1, RLENGTH - 1)
		unit = substr(d, RLENGTH, 1)
		s += n * (unit == "h" ? 3600 : unit == "m" ? 60 : 1)
		d = substr(d, RLENGTH + 1)
	}
	return s
}

/^fuzz: elapsed: [0-9hms.]+, execs: [0-9]+ / {
	t = seconds($3)
	n = $5
	interesting = $0
	sub(/.*new interesting: /, "", interesting)
	last = $3
	sub(/,$/, "", last)
	if (lines++ == 0) {
		t0 = t
		n0 = n
	}
}

END {
	if (lines == 0) {
		print "no progress reported"
		exit
	}
	rate = t > t0 ? (n - n0) / (t - t0) : (t > 0 ? n / t : 0)
	printf "elapsed %s, %d execs (%.0f/sec while fuzzing), new interesting: %s\n", last, n, rate, interesting
}

package dev.nepenthe.core.index;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What an integrity check looked at and what it found. Counts, not a boolean: an operator and
 * the forget protocol's evidence need "checked 120,000 lists, 0 hold a removed node", and a
 * test needs to see which invariant broke. Samples name ordinals and positions, never content.
 */
public record IntegrityReport(String structure, Map<String, Long> checked, Map<String, Long> violations,
        List<String> samples) {

    /** At most this many sample lines are kept per report. */
    public static final int MAX_SAMPLES = 20;

    public IntegrityReport {
        checked = Collections.unmodifiableMap(new LinkedHashMap<>(checked));
        violations = Collections.unmodifiableMap(new LinkedHashMap<>(violations));
        samples = List.copyOf(samples);
    }

    /** True when every violation count is zero. */
    public boolean isClean() {
        return violations.values().stream().allMatch(v -> v == 0);
    }

    public long violations(String name) {
        return violations.getOrDefault(name, 0L);
    }

    public long totalViolations() {
        return violations.values().stream().mapToLong(Long::longValue).sum();
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder(structure).append(isClean() ? ": clean" : ": VIOLATIONS");
        sb.append(" checked=").append(checked).append(" violations=").append(violations);
        for (String s : samples) {
            sb.append("\n  ").append(s);
        }
        return sb.toString();
    }

    public static Builder builder(String structure) {
        return new Builder(structure);
    }

    /** Collects counts while a checker walks a structure. */
    public static final class Builder {
        private final String structure;
        private final Map<String, Long> checked = new LinkedHashMap<>();
        private final Map<String, Long> violations = new LinkedHashMap<>();
        private final List<String> samples = new ArrayList<>();

        private Builder(String structure) {
            this.structure = structure;
        }

        public Builder checked(String what, long count) {
            checked.merge(what, count, Long::sum);
            return this;
        }

        /** Declares a violation kind with zero count, so a clean report still lists it. */
        public Builder expect(String violation) {
            violations.putIfAbsent(violation, 0L);
            return this;
        }

        public Builder violation(String violation, String sample) {
            violations.merge(violation, 1L, Long::sum);
            if (samples.size() < MAX_SAMPLES) {
                samples.add(violation + ": " + sample);
            }
            return this;
        }

        public IntegrityReport build() {
            return new IntegrityReport(structure, checked, violations, samples);
        }
    }
}

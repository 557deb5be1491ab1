package dev.nepenthe.core.index;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What an integrity check looked at and what it found. Counts, not a boolean: an operator and the
 * forget protocol's evidence need "checked 120,000 lists, 0 hold a removed node", and a test needs
 * to see which invariant broke. Samples name ordinals and positions, never content.
 *
 * @param structure what was checked ("index:hnsw", "collection:notes")
 * @param checked how many of each thing were examined, by name, in the order first counted
 * @param violations how many of each kind of violation were found, by name; kinds declared with
 *     {@link Builder#expect} appear with 0
 * @param samples up to {@value #MAX_SAMPLES} lines naming violations
 */
public record IntegrityReport(
        String structure,
        Map<String, Long> checked,
        Map<String, Long> violations,
        List<String> samples) {

    /** At most this many sample lines are kept per report. */
    public static final int MAX_SAMPLES = 20;

    /**
     * Copies the maps (keeping their order) and the samples.
     *
     * @throws NullPointerException if a map or the list is null, or a sample is null
     */
    public IntegrityReport {
        checked = Collections.unmodifiableMap(new LinkedHashMap<>(checked));
        violations = Collections.unmodifiableMap(new LinkedHashMap<>(violations));
        samples = List.copyOf(samples);
    }

    /**
     * True when every violation count is zero.
     *
     * @return whether the check found nothing wrong
     */
    public boolean isClean() {
        return violations.values().stream().allMatch(v -> v == 0);
    }

    /**
     * How many violations of one kind were found.
     *
     * @param name the kind
     * @return the count, 0 for a kind the report does not name
     */
    public long violations(String name) {
        return violations.getOrDefault(name, 0L);
    }

    /**
     * How many violations were found, of every kind.
     *
     * @return the sum of the counts
     */
    public long totalViolations() {
        return violations.values().stream().mapToLong(Long::longValue).sum();
    }

    /**
     * One line with the verdict and the counts, then one line per sample.
     *
     * @return the report as text, for logs and test failures
     */
    @Override
    public String toString() {
        StringBuilder sb =
                new StringBuilder(structure).append(isClean() ? ": clean" : ": VIOLATIONS");
        sb.append(" checked=").append(checked).append(" violations=").append(violations);
        for (String s : samples) {
            sb.append("\n  ").append(s);
        }
        return sb.toString();
    }

    /**
     * Starts a report.
     *
     * @param structure what is being checked
     * @return an empty builder
     */
    public static Builder builder(String structure) {
        return new Builder(structure);
    }

    /** Collects counts while a checker walks a structure. Not safe for concurrent use. */
    public static final class Builder {
        private final String structure;
        private final Map<String, Long> checked = new LinkedHashMap<>();
        private final Map<String, Long> violations = new LinkedHashMap<>();
        private final List<String> samples = new ArrayList<>();

        private Builder(String structure) {
            this.structure = structure;
        }

        /**
         * Adds to the count of things examined.
         *
         * @param what the kind of thing ("nodes", "lists")
         * @param count how many more were examined
         * @return this builder
         */
        public Builder checked(String what, long count) {
            checked.merge(what, count, Long::sum);
            return this;
        }

        /**
         * Declares a violation kind with zero count, so a clean report still lists it.
         *
         * @param violation the kind
         * @return this builder
         */
        public Builder expect(String violation) {
            violations.putIfAbsent(violation, 0L);
            return this;
        }

        /**
         * Counts one violation and keeps its sample while fewer than {@value #MAX_SAMPLES} are
         * kept.
         *
         * @param violation the kind
         * @param sample where it was found, by ordinal or position, never by content
         * @return this builder
         */
        public Builder violation(String violation, String sample) {
            violations.merge(violation, 1L, Long::sum);
            if (samples.size() < MAX_SAMPLES) {
                samples.add(violation + ": " + sample);
            }
            return this;
        }

        /**
         * The report as counted so far; the builder may go on counting.
         *
         * @return the report
         */
        public IntegrityReport build() {
            return new IntegrityReport(structure, checked, violations, samples);
        }
    }
}

package dev.nepenthe.bench.forget;

import java.io.IOException;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The question {@link RebuildCostBenchmark} and {@link TextRebuildCostBenchmark} both ask of an
 * index, repair in place or rebuild from the survivors, and the frame they share: the parameters
 * (how many of {@code n} are removed, and how), the seeded draw of the removed and the surviving
 * ordinals, one timed invocation on single-shot time, and a check after each invocation that
 * releases its result whether or not the result passed. A subclass builds, times and checks its own
 * kind of index.
 *
 * @param <T> the index an invocation repairs or builds
 */
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 2)
@Measurement(iterations = 5)
@Fork(1)
@State(Scope.Benchmark)
public abstract class RepairOrRebuildBenchmark<T> {

    @Param({"20000"})
    int n;

    /** How many to remove: a count, or a percentage of {@code n} (see {@link #count}). */
    @Param({"1", "0.1%", "1%", "10%"})
    String removed;

    @Param({"repair", "rebuild"})
    String how;

    /** The removed ordinals and the survivors, each ascending. */
    int[] gone;

    int[] survivors;

    /**
     * The copy an invocation repairs (for {@code repair}); what the invocation leaves, to check.
     */
    T input;

    T result;

    /**
     * Draws the {@code removed} ordinals of {@code n} with {@code seed} into {@link #gone}, the
     * rest into {@link #survivors}; returns how many were removed.
     */
    final int drawRemoved(long seed) {
        int count = count(removed, n);
        int[][] split = split(n, count, seed);
        gone = split[0];
        survivors = split[1];
        return count;
    }

    /** Throws, saying what is wrong, when the invocation's result is not what it should be. */
    abstract void verify() throws IOException;

    /** Frees what the invocation's result holds. */
    abstract void release(T result) throws IOException;

    @TearDown(Level.Invocation)
    public void check() throws IOException {
        try {
            verify();
        } finally {
            release(result);
            result = null;
            input = null;
        }
    }

    /**
     * For the check's control (tests): the invocation's result is its input with nothing removed.
     */
    void skipTheWorkForTheControl() {
        result = input;
    }

    /**
     * How many records a {@code removed} parameter means.
     *
     * @param spec {@code "1"} is one record, {@code "1%"} a hundredth of {@code n} (at least one)
     * @param n the collection's size
     * @return the count, 1 to {@code n - 1}
     * @throws IllegalArgumentException saying what was expected, when {@code spec} is neither or
     *     out of range
     */
    public static int count(String spec, int n) {
        try {
            int c =
                    spec.endsWith("%")
                            ? (int)
                                    Math.max(
                                            1,
                                            Math.round(
                                                    n
                                                            * Double.parseDouble(
                                                                    spec.substring(
                                                                            0, spec.length() - 1))
                                                            / 100))
                            : Integer.parseInt(spec);
            if (c < 1 || c >= n) {
                throw new IllegalArgumentException(
                        "removed: expected between 1 and "
                                + (n - 1)
                                + " records, got "
                                + spec
                                + " ("
                                + c
                                + ")");
            }
            return c;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(
                    "removed: expected a count such as 1 or a percentage such as 0.1%, got '"
                            + spec
                            + "'");
        }
    }

    /**
     * {@code count} of the ordinals below {@code n} drawn at random with {@code seed}, and the
     * rest: {removed, survivors}, each ascending.
     */
    static int[][] split(int n, int count, long seed) {
        int[] order = shuffled(n, new SplittableRandom(seed));
        int[] removed = Arrays.copyOf(order, count);
        int[] survivors = Arrays.copyOfRange(order, count, n);
        Arrays.sort(removed);
        Arrays.sort(survivors);
        return new int[][] {removed, survivors};
    }

    private static int[] shuffled(int n, SplittableRandom rnd) {
        int[] order = rangeOf(n);
        for (int i = n - 1; i > 0; i--) {
            int j = rnd.nextInt(i + 1);
            int t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        return order;
    }

    /** 0 to {@code n - 1}, ascending. */
    static int[] rangeOf(int n) {
        int[] out = new int[n];
        for (int i = 0; i < n; i++) {
            out[i] = i;
        }
        return out;
    }
}

package dev.nepenthe.testing.faults;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;

/**
 * What a {@link FaultyFileSystem} does wrong, and when. Every decision is counted and listed, so
 * a test can say how many faults it injected and which file each one hit.
 *
 * <p>Faults of one {@link Op} are armed with a countdown: the n-th operation of that kind (on a
 * file the plan's filter admits) fails, and, unless the fault is sticky, only that one. The disk
 * fills with a byte budget: writes beyond it fail as a full disk does (the write that crosses it
 * writes what fits and reports a short count; the next one throws). {@link #heal} turns every
 * fault off, as an operator freeing space or replacing a disk would.
 *
 * <p>A failed fsync also loses what the channel wrote since its last good fsync, as the page cache
 * of Linux does when it drops dirty pages it could not write back ("fsyncgate"): a store that
 * retries the fsync and trusts its second answer loses acknowledged data, and the test sees it.
 */
public final class FaultPlan {

    /** The operations a plan can make fail. */
    public enum Op {
        /** A write to a file (also the disk-full budget's unit). */
        WRITE,
        /** {@code FileChannel.force} on a file. */
        FSYNC,
        /** {@code FileChannel.force} on a directory (making a rename or a delete durable). */
        DIRECTORY_FSYNC,
        /** {@code Files.move}. */
        RENAME,
        /** A read from a file. */
        READ,
        /** A file deletion. */
        DELETE
    }

    /** One injected fault: when, what and on which file (relative to the file system's root). */
    public record Injected(long sequence, Op op, String file, String kind) {}

    private final long seed;
    private final Random random;
    private final Map<Op, Long> countdown = new EnumMap<>(Op.class);
    private final Map<Op, Boolean> sticky = new EnumMap<>(Op.class);
    private final Map<Op, Long> seen = new EnumMap<>(Op.class);
    private final List<Injected> injected = new ArrayList<>();
    private final AtomicLong sequence = new AtomicLong();
    private long bytesLeft = Long.MAX_VALUE;
    private boolean diskFull;
    private double shortWriteChance;
    private Predicate<String> files = f -> true;

    private FaultPlan(long seed) {
        this.seed = seed;
        this.random = new Random(seed);
    }

    /** A plan that injects nothing until armed; {@code seed} drives short writes and {@link #random}. */
    public static FaultPlan none(long seed) {
        return new FaultPlan(seed);
    }

    /**
     * A plan drawn from {@code seed}: one kind of fault (a full disk after some bytes, or an I/O
     * error on the n-th write, fsync, directory fsync, rename or read), sometimes sticky, with
     * short writes mixed in. The same seed draws the same plan.
     *
     * @param scale roughly how many operations of a kind the workload makes: countdowns fall in
     *     {@code [1, scale]} and the byte budget in {@code [1, scale * 4096]}
     */
    public static FaultPlan random(long seed, int scale) {
        FaultPlan p = new FaultPlan(seed);
        Random r = p.random;
        int kind = r.nextInt(7);
        long n = 1 + r.nextInt(Math.max(1, scale));
        boolean stick = r.nextInt(3) == 0;
        switch (kind) {
            case 0 -> p.diskFullAfter(1 + (long) (r.nextDouble() * scale * 4096));
            case 1 -> p.failNth(Op.WRITE, n, stick);
            case 2 -> p.failNth(Op.FSYNC, n, stick);
            case 3 -> p.failNth(Op.DIRECTORY_FSYNC, n, stick);
            case 4 -> p.failNth(Op.RENAME, n, stick);
            case 5 -> p.failNth(Op.READ, n, stick);
            default -> p.failNth(Op.DELETE, n, stick);
        }
        if (r.nextBoolean()) {
            p.shortWrites(0.2);
        }
        return p;
    }

    /** The seed this plan was made with. */
    public long seed() {
        return seed;
    }

    /** Makes the {@code n}-th next operation of {@code op} fail (and every later one, when sticky). */
    public synchronized FaultPlan failNth(Op op, long n, boolean stickyAfter) {
        if (n < 1) {
            throw new IllegalArgumentException("countdown: expected 1 or more, got " + n);
        }
        countdown.put(op, n);
        sticky.put(op, stickyAfter);
        return this;
    }

    /** Lets {@code bytes} more bytes be written, then reports the disk full. */
    public synchronized FaultPlan diskFullAfter(long bytes) {
        bytesLeft = bytes;
        diskFull = false;
        return this;
    }

    /** Writes return a short count with this chance (a legal answer that callers must loop on). */
    public synchronized FaultPlan shortWrites(double chance) {
        shortWriteChance = chance;
        return this;
    }

    /** Injects faults only on files whose root-relative path passes {@code filter}. */
    public synchronized FaultPlan onlyFiles(Predicate<String> filter) {
        files = filter;
        return this;
    }

    /** Turns every fault off: space is back, the disk answers. What was injected stays listed. */
    public synchronized void heal() {
        countdown.clear();
        sticky.clear();
        bytesLeft = Long.MAX_VALUE;
        diskFull = false;
        shortWriteChance = 0;
    }

    /** Every fault injected so far, in order. */
    public synchronized List<Injected> injected() {
        return List.copyOf(injected);
    }

    /** How many faults were injected so far. */
    public synchronized int injectedCount() {
        return injected.size();
    }

    /** Whether the disk is reported full now. */
    public synchronized boolean diskIsFull() {
        return diskFull;
    }

    // ---- decisions, called by the file system ---------------------------------------------

    /** Throws when the armed countdown of {@code op} reaches this operation on {@code file}. */
    synchronized void check(Op op, String file) throws IOException {
        if (!files.test(file)) {
            return;
        }
        seen.merge(op, 1L, Long::sum);
        Long left = countdown.get(op);
        if (left == null) {
            return;
        }
        if (left > 1) {
            countdown.put(op, left - 1);
            return;
        }
        if (!sticky.getOrDefault(op, false)) {
            countdown.remove(op);
        }
        throw record(op, file, "Input/output error");
    }

    /**
     * How many of {@code wanted} bytes a write to {@code file} may put down now: all of them, a
     * short count, or what is left of the budget; throws when the disk is already full.
     */
    synchronized int allowWrite(String file, int wanted) throws IOException {
        if (wanted == 0 || !files.test(file)) {
            return wanted;
        }
        if (diskFull || bytesLeft <= 0) {
            diskFull = true;
            throw record(Op.WRITE, file, "No space left on device");
        }
        int n = wanted;
        if (shortWriteChance > 0 && wanted > 1 && random.nextDouble() < shortWriteChance) {
            n = 1 + random.nextInt(wanted - 1);
        }
        if (n > bytesLeft) {
            n = (int) bytesLeft;
        }
        bytesLeft -= n;
        return n;
    }

    /** Throws when the disk is full: creating a file or a folder needs space too. */
    synchronized void checkCreate(String file) throws IOException {
        if (files.test(file) && (diskFull || bytesLeft <= 0)) {
            diskFull = true;
            throw record(Op.WRITE, file, "No space left on device");
        }
    }

    private InjectedIOException record(Op op, String file, String kind) {
        injected.add(new Injected(sequence.incrementAndGet(), op, file, kind));
        return new InjectedIOException(file + ": " + kind + " (injected " + op + " fault, plan seed " + seed + ")");
    }

    /** The relative form of a path the plan's filter and records see. */
    static String relative(Path root, Path file) {
        Path abs = file.toAbsolutePath().normalize();
        return abs.startsWith(root) ? root.relativize(abs).toString() : abs.toString();
    }
}

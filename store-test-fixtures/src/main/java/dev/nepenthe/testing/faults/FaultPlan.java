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
 * What a {@link FaultyFileSystem} does wrong, and when. Every decision is counted and listed, so a
 * test can say how many faults it injected and which file each one hit.
 *
 * <p>Faults of one {@link Op} are armed with a countdown: the n-th operation of that kind (on a
 * file the plan's filter admits) fails, and, unless the fault is sticky, only that one. The disk
 * fills with a byte budget: writes beyond it fail as a full disk does (the write that crosses it
 * writes what fits and reports a short count; the next one throws). {@link #heal} turns every fault
 * off, as an operator freeing space or replacing a disk would.
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

    /**
     * A plan that injects nothing until armed; {@code seed} drives short writes and {@link
     * #armRandomly}.
     */
    public static FaultPlan none(long seed) {
        return new FaultPlan(seed);
    }

    /**
     * Arms one fault drawn from this plan's random stream: a full disk after some bytes, or an I/O
     * error on the n-th write, fsync, directory fsync, rename, read or delete, sometimes sticky,
     * sometimes with short writes mixed in. The same seed arms the same faults in the same order.
     *
     * @param scale roughly how many operations of a kind the workload makes: countdowns fall in
     *     {@code [1, scale]} and the byte budget in {@code [1, scale * 4096]}
     * @return what was armed, for the test's log
     */
    public synchronized String armRandomly(int scale) {
        int kind = random.nextInt(7);
        long n = 1L + random.nextInt(Math.max(1, scale));
        boolean stick = random.nextInt(3) == 0;
        String what;
        switch (kind) {
            case 0 -> {
                long bytes = 1 + (long) (random.nextDouble() * scale * 4096);
                diskFullAfter(bytes);
                what = "disk full after " + bytes + " bytes";
            }
            case 1 -> what = arm(Op.WRITE, n, stick);
            case 2 -> what = arm(Op.FSYNC, n, stick);
            case 3 -> what = arm(Op.DIRECTORY_FSYNC, n, stick);
            case 4 -> what = arm(Op.RENAME, n, stick);
            case 5 -> what = arm(Op.READ, n, stick);
            default -> what = arm(Op.DELETE, n, stick);
        }
        if (random.nextBoolean()) {
            shortWrites(0.2);
            what += ", short writes";
        }
        return what;
    }

    private String arm(Op op, long n, boolean stick) {
        failNth(op, n, stick);
        return op + " fails at the " + n + "th" + (stick ? " and after" : "");
    }

    /** The seed this plan was made with. */
    public long seed() {
        return seed;
    }

    /**
     * Makes the {@code n}-th next operation of {@code op} fail (and every later one, when sticky).
     */
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

    /**
     * Throws when the armed countdown of {@code op} reaches this operation on {@code file}; a fault
     * of an operation on a path ({@code real} not null: a rename, a delete) names the path, as the
     * JDK's {@link java.nio.file.FileSystemException} does, one on a channel does not.
     */
    synchronized void check(Op op, String file, Path real) throws IOException {
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
        throw record(op, file, real, "Input/output error");
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
            throw record(Op.WRITE, file, null, "No space left on device");
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
    synchronized void checkCreate(String file, Path real) throws IOException {
        if (files.test(file) && (diskFull || bytesLeft <= 0)) {
            diskFull = true;
            throw record(Op.WRITE, file, real, "No space left on device");
        }
    }

    private IOException record(Op op, String file, Path real, String kind) {
        injected.add(new Injected(sequence.incrementAndGet(), op, file, kind));
        // As the JDK reports them: an errno from a channel alone, without the file's name (naming
        // it is the store's job, and the tests check that it does); one from an operation on a
        // path with the path.
        return real == null
                ? new InjectedIOException(kind)
                : new InjectedFileSystemException(real.toString(), kind);
    }

    /** The relative form of a path the plan's filter and records see. */
    static String relative(Path root, Path file) {
        Path abs = file.toAbsolutePath().normalize();
        return abs.startsWith(root) ? root.relativize(abs).toString() : abs.toString();
    }
}

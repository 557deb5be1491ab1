package dev.nepenthe.cluster.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Random appends, reads, flushes, rolls, truncates, destroys and reopens, each checked against a
 * model: the entries (a {@code TreeMap<Long, byte[]>} per segment) and where segments begin and
 * end. Replay a failure with {@code -Djournal.seed=<the printed seed>}.
 */
class PayloadJournalModelTest {

    private static final int STEPS = 4000;

    /** Small, so that the journal's own rolls happen often. */
    private static final long ROLL_BYTES = 4096;

    @TempDir Path tmp;

    /** What the journal should hold, segment by segment. */
    private static final class Model {
        final List<TreeMap<Long, byte[]>> segments = new ArrayList<>();

        /** Whether the last segment still takes appends. */
        boolean open;

        long openBytes;
        long last = -1;
        long destroyedThrough = -1;

        void append(long index, byte[] payload) {
            if (open && openBytes >= ROLL_BYTES) {
                open = false;
            }
            if (!open) {
                segments.add(new TreeMap<>());
                open = true;
                openBytes = 0;
            }
            segments.getLast().put(index, payload);
            openBytes += JournalSegmentRecords.OVERHEAD + payload.length;
            last = index;
        }

        void truncate(long from) {
            while (!segments.isEmpty() && segments.getLast().firstKey() >= from) {
                segments.removeLast();
                open = false;
            }
            if (!segments.isEmpty()) {
                segments.getLast().tailMap(from, true).clear();
                if (open) {
                    openBytes = 0;
                    for (byte[] p : segments.getLast().values()) {
                        openBytes += JournalSegmentRecords.OVERHEAD + p.length;
                    }
                }
            }
            if (last >= from) {
                last = segments.isEmpty() ? destroyedThrough : segments.getLast().lastKey();
            }
        }

        int destroyThrough(long index) {
            if (open && segments.getLast().lastKey() <= index) {
                open = false;
            }
            int n = 0;
            while (!segments.isEmpty()
                    && !(open && segments.size() == 1)
                    && segments.getFirst().lastKey() <= index) {
                destroyedThrough = Math.max(destroyedThrough, segments.getFirst().lastKey());
                segments.removeFirst();
                n++;
            }
            return n;
        }

        void reopened() {
            open = false;
            last = segments.isEmpty() ? -1 : segments.getLast().lastKey();
            destroyedThrough = -1;
        }

        byte[] get(long index) {
            for (TreeMap<Long, byte[]> s : segments) {
                byte[] p = s.get(index);
                if (p != null) {
                    return p;
                }
            }
            return null;
        }
    }

    @Test
    void randomOperationsMatchTheModel() throws IOException {
        long seed = Long.getLong("journal.seed", System.nanoTime());
        System.out.println("seed=" + seed);
        SplittableRandom rnd = new SplittableRandom(seed);
        Path dir = tmp.resolve("journal");
        Model model = new Model();
        int[] stats =
                new int[4]; // segments destroyed, truncates that dropped entries, reopens, rolls

        PayloadJournal journal = open(dir);
        try {
            for (int step = 0; step < STEPS; step++) {
                String at = "seed=" + seed + " step=" + step;
                int op = rnd.nextInt(100);
                if (op < 56) {
                    long index = model.last + 1 + (rnd.nextInt(4) == 0 ? rnd.nextInt(1, 4) : 0);
                    int length = rnd.nextInt(20) == 0 ? rnd.nextInt(1000, 3000) : rnd.nextInt(200);
                    byte[] payload = new byte[length];
                    rnd.nextBytes(payload);
                    journal.append(index, payload);
                    model.append(index, payload);
                } else if (op < 66) {
                    long index = rnd.nextLong(-1, model.last + 3);
                    byte[] expected = model.get(index);
                    if (expected == null) {
                        assertThat(journal.read(index)).as(at + " read %d", index).isEmpty();
                    } else {
                        assertThat(journal.read(index))
                                .as(at + " read %d", index)
                                .contains(expected);
                    }
                } else if (op < 69) {
                    long index = rnd.nextLong(-1, model.last + 3);
                    assertThat(journal.decryptable(index))
                            .as(at + " decryptable %d", index)
                            .isEqualTo(model.get(index) != null);
                } else if (op < 73) {
                    journal.flush();
                } else if (op < 79) {
                    journal.roll();
                    model.open = false;
                    stats[3]++;
                } else if (op < 85) {
                    long low = model.destroyedThrough + 1;
                    // Mostly a few entries off the tail, as Ratis does when logs diverge
                    long from =
                            rnd.nextInt(5) == 0
                                    ? rnd.nextLong(low, Math.max(low, model.last + 1) + 1)
                                    : Math.max(low, model.last + 1 - rnd.nextInt(12));
                    long before = model.last;
                    journal.truncate(from);
                    model.truncate(from);
                    stats[1] += model.last < before ? 1 : 0;
                    if (model.destroyedThrough >= 0) {
                        long dead = rnd.nextLong(0, model.destroyedThrough + 1);
                        PayloadJournal j = journal;
                        assertThatThrownBy(() -> j.truncate(dead))
                                .as(at + " truncate into destroyed %d", dead)
                                .isInstanceOf(IllegalArgumentException.class);
                    }
                } else if (op < 88) {
                    // Somewhere in what is held, now and then past it
                    long first =
                            model.segments.isEmpty() ? 0 : model.segments.getFirst().firstKey();
                    long through = rnd.nextLong(Math.max(0, first - 1), model.last + 2);
                    int destroyed = model.destroyThrough(through);
                    assertThat(journal.destroyThrough(through))
                            .as(at + " destroyThrough %d", through)
                            .isEqualTo(destroyed);
                    stats[0] += destroyed;
                } else if (op < 91) {
                    journal.close();
                    journal = open(dir);
                    model.reopened();
                    stats[2]++;
                    compareAll(journal, model, at + " after reopen", rnd);
                } else {
                    compareAll(journal, model, at, rnd);
                }
                compareShape(journal, model, at);
            }
            System.out.printf(
                    "seed=%d: %d segments destroyed, %d truncates that dropped entries, %d"
                            + " reopens, %d rolls, %d segments left, last index %d%n",
                    seed,
                    stats[0],
                    stats[1],
                    stats[2],
                    stats[3],
                    model.segments.size(),
                    model.last);
            journal.flush();
            journal.close();
            journal = open(dir);
            model.reopened();
            compareAll(journal, model, "seed=" + seed + " at the end", rnd);
            compareShape(journal, model, "seed=" + seed + " at the end");
        } finally {
            journal.close();
        }
    }

    private static PayloadJournal open(Path dir) throws IOException {
        return PayloadJournal.open(dir, ROLL_BYTES, (ch, f) -> ch.force(true));
    }

    /** First and last index, and one key file and one segment file per model segment. */
    private static void compareShape(PayloadJournal journal, Model model, String at)
            throws IOException {
        assertThat(journal.lastIndex()).as(at + " lastIndex").isEqualTo(Math.max(model.last, 0));
        long first = model.segments.isEmpty() ? 0 : model.segments.getFirst().firstKey();
        assertThat(journal.firstIndex()).as(at + " firstIndex").isEqualTo(first);
        List<String> expected = new ArrayList<>();
        for (TreeMap<Long, byte[]> s : model.segments) {
            String base = JournalSegment.baseName(s.firstKey());
            expected.add(base + JournalSegment.DATA_SUFFIX);
            expected.add(base + JournalSegment.KEY_SUFFIX);
        }
        assertThat(PayloadJournalTest.names(journal.files()))
                .as(at + " files")
                .containsExactlyElementsOf(expected);
    }

    /** Every index from 0 to past the last reads as the model says. */
    private static void compareAll(
            PayloadJournal journal, Model model, String at, SplittableRandom rnd)
            throws IOException {
        TreeMap<Long, byte[]> all = new TreeMap<>();
        for (TreeMap<Long, byte[]> s : model.segments) {
            all.putAll(s);
        }
        for (long i = 0; i <= model.last + 2; i++) {
            byte[] expected = all.get(i);
            if (expected == null) {
                assertThat(journal.read(i)).as(at + " read %d", i).isEmpty();
            } else {
                assertThat(journal.read(i)).as(at + " read %d", i).contains(expected);
            }
        }
        // decryptable() reads the key file each time: a sample is enough
        List<Long> held = new ArrayList<>(all.keySet());
        for (int k = 0; k < Math.min(20, held.size()); k++) {
            long i = held.get(rnd.nextInt(held.size()));
            assertThat(journal.decryptable(i)).as(at + " decryptable %d", i).isTrue();
        }
    }
}

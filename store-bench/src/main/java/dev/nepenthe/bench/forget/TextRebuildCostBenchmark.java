package dev.nepenthe.bench.forget;

import dev.nepenthe.core.internal.crypto.KeyedHash;
import dev.nepenthe.core.internal.crypto.Keystore;
import dev.nepenthe.core.internal.crypto.MasterKey;
import dev.nepenthe.core.internal.text.TextIndex;
import dev.nepenthe.testing.TestFiles;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * {@link RebuildCostBenchmark}'s question for the encrypted text index: forgetting one text, 0.1%,
 * 1% or 10% of them in place ({@code repair}: delete their documents, rewrite the segments that
 * held them and destroy the old files' keys, commit: what a forget's text cleanup does) against a
 * new index of the survivors ({@code rebuild}: every survivor added, committed).
 *
 * <p>The texts are seeded: each has 30 words drawn from a 20,000-word vocabulary with Zipf-like
 * frequencies, and one word of its own, so a forgotten text's own word is a term no survivor holds.
 * Each invocation starts from an index of all the texts, built (untimed) in a folder and under keys
 * of its own, since a repair destroys the keys of the files it rewrites. Each result is checked
 * after it is timed: it holds exactly the survivors, the index's own residue proof ({@link
 * TextIndex#residue}) finds none of the forgotten texts' words, and a search for a survivor's own
 * word finds it. A result that fails throws.
 *
 * <p>Why: a forget's text cleanup rewrites the segments that held the forgotten texts, and this
 * says what that costs beside building the index again. The figures are in docs/BENCHMARKS.md
 * ("Forgetting against rebuilding").
 */
@State(Scope.Benchmark)
public class TextRebuildCostBenchmark extends RepairOrRebuildBenchmark<TextIndex> {

    /** The texts' seed; the removed ones are drawn with {@code SEED + 1}. */
    static final long SEED = 7;

    private static final int VOCABULARY = 20_000;
    private static final int WORDS = 30;

    /** The suite reads it as the index kind beside {@link RebuildCostBenchmark}'s. */
    @Param({"text"})
    String index;

    private Path dir;
    private Keystore keystore;
    private KeyedHash hashes;
    private String[] texts;
    private int invocation;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        if (!index.equals("text")) {
            throw new IllegalArgumentException("index: expected text, got '" + index + "'");
        }
        dir = Files.createTempDirectory("nepenthe-text-rebuild");
        MasterKey mk = MasterKey.of(new byte[32]);
        keystore = Keystore.open(dir.resolve("keys"), mk);
        hashes = new KeyedHash(mk);
        texts = texts(n, new SplittableRandom(SEED));
        int count = drawRemoved(SEED + 1);
        System.out.printf(
                Locale.ROOT,
                "%ntext-rebuild-cost data: seed %d, %d texts of %d words (vocabulary %d)"
                        + " and a word of their own; %d removed (seed %d)%n",
                SEED,
                n,
                WORDS,
                VOCABULARY,
                count,
                SEED + 1);
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        keystore.close();
        TestFiles.deleteTree(dir);
    }

    @Setup(Level.Invocation)
    public void buildWhole() throws IOException {
        if (how.equals("repair")) {
            input = build(rangeOf(n));
        }
    }

    @Benchmark
    public TextIndex forget() throws IOException {
        if (how.equals("rebuild")) {
            result = build(survivors);
        } else {
            input.delete(gone);
            input.mergeDeletesAway();
            result = input;
        }
        return result;
    }

    @Override
    void release(TextIndex result) throws IOException {
        result.destroy();
    }

    @Override
    void verify() throws IOException {
        result.publish();
        if (result.size() != survivors.length) {
            throw new IllegalStateException(
                    how
                            + " of text: expected "
                            + survivors.length
                            + " documents, found "
                            + result.size());
        }
        Map<Integer, Long> forgotten = new HashMap<>();
        List<String> words = new ArrayList<>();
        for (int ord : gone) {
            forgotten.put(ord, 1L);
            words.add(ownWord(ord));
        }
        TextIndex.Residue residue = result.residue(forgotten, words);
        if (!residue.problems().isEmpty()) {
            throw new IllegalStateException(
                    how + " of text: the residue proof found " + residue.problems());
        }
        int probe = survivors[survivors.length / 2];
        int[] hits = result.search(ownWord(probe), null, 3).ordinals();
        if (hits.length != 1 || hits[0] != probe) {
            throw new IllegalStateException(
                    how
                            + " of text: a search for survivor "
                            + probe
                            + "'s own word found "
                            + Arrays.toString(hits));
        }
    }

    private TextIndex build(int[] ordinals) throws IOException {
        invocation++;
        TextIndex t =
                TextIndex.open(
                        dir.resolve("text-" + invocation),
                        "standard",
                        keystore,
                        hashes,
                        "bench-" + invocation);
        for (int ord : ordinals) {
            t.add(ord, 1L, texts[ord]);
        }
        t.commit();
        t.publish();
        return t;
    }

    /** A word no other text holds. */
    private static String ownWord(int ord) {
        return word("own", ord);
    }

    /** {@code prefix} and {@code x} in base 26, as letters only, so the analyzer keeps it whole. */
    private static String word(String prefix, int x) {
        StringBuilder sb = new StringBuilder(prefix);
        for (; ; x /= 26) {
            sb.append((char) ('a' + x % 26));
            if (x < 26) {
                return sb.toString();
            }
        }
    }

    private static String[] texts(int n, SplittableRandom rnd) {
        String[] vocabulary = new String[VOCABULARY];
        for (int i = 0; i < VOCABULARY; i++) {
            vocabulary[i] = word("w", i);
        }
        String[] out = new String[n];
        for (int t = 0; t < n; t++) {
            StringBuilder sb = new StringBuilder(ownWord(t));
            for (int w = 0; w < WORDS; w++) {
                // Zipf-like: the cube of a uniform draw favours the first words of the vocabulary.
                double u = rnd.nextDouble();
                sb.append(' ').append(vocabulary[(int) (u * u * u * VOCABULARY)]);
            }
            out[t] = sb.toString();
        }
        return out;
    }
}

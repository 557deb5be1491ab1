package dev.nepenthe.core.internal.forget;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import dev.nepenthe.core.Filter;
import dev.nepenthe.core.forget.ForgetScope;
import dev.nepenthe.core.internal.crypto.KeyedHash;
import dev.nepenthe.core.internal.crypto.MasterKey;
import dev.nepenthe.testing.Seeds;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * A metadata scope hashes by what its filter means, not by how it prints: an {@code in} filter's
 * values in any order (its set's order changes between JVM runs, so a retried forget after a
 * restart must still be the same request), {@code and}/{@code or} children in any order, and 3 as a
 * long or a double, hash alike; filters that select differently hash apart.
 */
class ScopeHashesTest {

    private final ScopeHashes hashes = new ScopeHashes(new KeyedHash(MasterKey.of(new byte[32])));

    private KeyedHash.Hash of(Filter f) {
        return hashes.scope("t", new ForgetScope.Metadata(f));
    }

    @Test
    void theSameMeaningHashesAlikeWhateverTheOrderOrNumberType() {
        long seed = Seeds.draw("theSameMeaningHashesAlikeWhateverTheOrderOrNumberType");
        Random rnd = new Random(seed);
        List<Object> values = new ArrayList<>(List.of("a", "b", "c:d", "e,f", 3L, 4.5, true));
        Filter first = Filter.in("k", values.toArray());
        for (int i = 0; i < 20; i++) {
            Collections.shuffle(values, rnd);
            assertEquals(
                    of(first),
                    of(Filter.in("k", values.toArray())),
                    "in, shuffled" + Seeds.replay(seed));
        }
        assertEquals(of(Filter.eq("n", 3L)), of(Filter.eq("n", 3.0)));
        assertEquals(
                of(Filter.eq("a", 1).and(Filter.eq("b", 2))),
                of(Filter.eq("b", 2).and(Filter.eq("a", 1))));
        assertEquals(
                of(Filter.eq("a", 1).or(Filter.exists("b"))),
                of(Filter.exists("b").or(Filter.eq("a", 1))));
    }

    @Test
    void differentSelectionsHashApart() {
        List<Filter> distinct =
                List.of(
                        Filter.eq("k", "v"),
                        Filter.eq("k", "w"),
                        Filter.eq("j", "v"),
                        Filter.eq("k", 3L),
                        Filter.eq("k", 3.5),
                        Filter.eq("k", "3"),
                        Filter.in("k", "v", "w"),
                        Filter.in("k", "v"),
                        Filter.exists("k"),
                        Filter.not(Filter.exists("k")),
                        Filter.range("k", 1, 2),
                        Filter.gt("k", 1),
                        Filter.gte("k", 1),
                        Filter.contains("k", "v"),
                        Filter.eq("k", true),
                        // A key or value holding the delimiters cannot forge another filter.
                        Filter.in("k", "a,b"),
                        Filter.in("k", "a", "b"),
                        Filter.eq("k(", ")"),
                        Filter.eq("k", "()"));
        for (int i = 0; i < distinct.size(); i++) {
            for (int j = i + 1; j < distinct.size(); j++) {
                assertNotEquals(
                        of(distinct.get(i)),
                        of(distinct.get(j)),
                        distinct.get(i) + " vs " + distinct.get(j));
            }
        }
    }
}

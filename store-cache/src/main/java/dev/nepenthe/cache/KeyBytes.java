package dev.nepenthe.cache;

import dev.nepenthe.core.Filter;
import dev.nepenthe.core.index.SearchParams;
import java.util.ArrayDeque;
import java.util.Map;

/**
 * Estimated heap a cache key holds beyond {@link QueryCache#ENTRY_BYTES}: its subject, its filter
 * and its knobs, which a caller chooses and which can be far larger than the result (an {@code in}
 * of a hundred thousand ids). Strings count {@value #STRING_BYTES} bytes and 2 per character, boxed
 * numbers {@value #BOX_BYTES}, a filter term {@value #TERM_BYTES} plus its key, a value of a set or
 * list {@value #SLOT_BYTES} for its slot, a knob {@value #KNOB_BYTES} plus its name. Strings shared
 * with the caller count as if they were not, as elsewhere in the cache. The walk keeps its own
 * stack: a filter may nest as deep as its caller made it.
 */
final class KeyBytes {

    static final long STRING_BYTES = 40;
    static final long BOX_BYTES = 16;
    static final long TERM_BYTES = 32;
    static final long SLOT_BYTES = 16;
    static final long KNOB_BYTES = 48;

    private KeyBytes() {}

    static long of(String subject, Filter filter, SearchParams params) {
        return string(subject) + filter(filter) + params(params);
    }

    static long string(String s) {
        return s == null ? 0 : STRING_BYTES + 2L * s.length();
    }

    static long filter(Filter root) {
        if (root == null) {
            return 0;
        }
        long n = 0;
        ArrayDeque<Filter> todo = new ArrayDeque<>();
        todo.push(root);
        while (!todo.isEmpty()) {
            Filter f = todo.pop();
            n += TERM_BYTES;
            switch (f) {
                case Filter.Eq eq -> n += string(eq.key()) + value(eq.value());
                case Filter.In in -> {
                    n += string(in.key());
                    for (Object v : in.values()) {
                        n += SLOT_BYTES + value(v);
                    }
                }
                case Filter.Range r -> n += string(r.key());
                case Filter.Compare c -> n += string(c.key()) + value(c.value());
                case Filter.Contains c -> n += string(c.key()) + string(c.substring());
                case Filter.Exists e -> n += string(e.key());
                case Filter.Not not -> todo.push(not.inner());
                case Filter.And and -> {
                    n += SLOT_BYTES * and.all().size();
                    and.all().forEach(todo::push);
                }
                case Filter.Or or -> {
                    n += SLOT_BYTES * or.any().size();
                    or.any().forEach(todo::push);
                }
            }
        }
        return n;
    }

    private static long value(Object v) {
        return v instanceof String s ? string(s) : BOX_BYTES;
    }

    static long params(SearchParams p) {
        long n = 0;
        for (Map.Entry<String, Integer> e : p.values().entrySet()) {
            n += KNOB_BYTES + string(e.getKey());
        }
        return n;
    }
}

package dev.nepenthe.core.internal.forget;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The checks an operation's verification shared with other operations of its batch, as its ledger
 * entries and receipt cite them. A receipt's own counts are the operation's own (its records, the
 * ordinals, terms and files checked for them); a structure check that ran once for the whole batch
 * (an index's integrity checker over every removal, the text index's walk) is named here with what
 * it covered, so nobody reads the batch's work as the operation's. Counts and surface names only:
 * nothing of another operation's scope.
 *
 * @param batch an id for the verification pass, the same in every receipt that cites it
 * @param checks the shared checks, by surface
 */
record BatchCitation(String batch, List<SharedCheck> checks) {

    /**
     * One check that ran once for several operations.
     *
     * @param surface the surface it proved ("collection:notes/index:hnsw")
     * @param operations how many operations' removals it covered, this one included
     * @param records how many removed records it covered
     * @param checked what the check itself counted (the index checker's counts, terms and files)
     * @param clean whether it found nothing
     */
    record SharedCheck(String surface, int operations, int records, long checked, boolean clean) {}

    BatchCitation {
        checks = List.copyOf(checks);
    }

    /** The citation as ledger entries and receipts carry it (canonical JSON). */
    Map<String, Object> evidence() {
        List<Object> out = new ArrayList<>();
        for (SharedCheck c : checks) {
            Map<String, Object> m = new TreeMap<>();
            m.put("surface", c.surface());
            m.put("operations", c.operations());
            m.put("records", c.records());
            m.put("checked", c.checked());
            m.put("clean", c.clean());
            out.add(m);
        }
        Map<String, Object> b = new TreeMap<>();
        b.put("id", batch);
        b.put("sharedChecks", out);
        return b;
    }
}

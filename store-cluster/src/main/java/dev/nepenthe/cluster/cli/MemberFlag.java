package dev.nepenthe.cluster.cli;

import dev.nepenthe.cluster.Member;

/**
 * The text form of a member on the command line, {@code ID=CLIENT-HOST:PORT/RAFT-HOST:PORT}: the
 * client address first because it is the one a user connects to. One place parses it and one
 * formats it, so {@code up} starts its nodes with flags that {@code node} reads back.
 */
final class MemberFlag {

    static final String FORM = "ID=CLIENT-HOST:PORT/RAFT-HOST:PORT";
    static final String EXAMPLE = "n1=127.0.0.1:7801/127.0.0.1:7901";

    private MemberFlag() {}

    /**
     * Parses one --member value.
     *
     * @throws IllegalArgumentException naming the form expected and what arrived
     */
    static Member parse(String text) {
        int eq = text.indexOf('=');
        int slash = text.indexOf('/', Math.max(eq, 0));
        if (eq <= 0 || slash < 0 || text.indexOf('/', slash + 1) >= 0) {
            throw new IllegalArgumentException(
                    "--member: expected " + FORM + " (e.g. " + EXAMPLE + "), got '" + text + "'");
        }
        String id = text.substring(0, eq);
        String client = text.substring(eq + 1, slash);
        String raft = text.substring(slash + 1);
        try {
            return new Member(id, raft, client);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    "--member '" + text + "': " + e.getMessage() + " (form " + FORM + ")", e);
        }
    }

    /** The --member value of a member. */
    static String format(Member m) {
        return m.id() + "=" + m.clientAddress() + "/" + m.raftAddress();
    }
}

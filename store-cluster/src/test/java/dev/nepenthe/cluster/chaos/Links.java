package dev.nepenthe.cluster.chaos;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * The network between the replicas: one {@link LinkProxy} per directed pair, for the connections
 * replica i opens to replica j (Raft's appends and votes, and the writes its Raft client routes to
 * the leader), listening where i's hosts file puts j's name ({@link ChaosNodes#ip ip(i, j)}) and
 * forwarding to j's own address. Cutting i to j alone parts the connections i opens, not those j
 * opens to i.
 */
final class Links implements AutoCloseable {

    private final ChaosNodes nodes;
    private final LinkProxy[][] proxies = new LinkProxy[ChaosNodes.N][ChaosNodes.N];

    private Links(ChaosNodes nodes) {
        this.nodes = nodes;
    }

    /**
     * The six proxies of a group, healed.
     *
     * @throws IOException if a proxy cannot bind its address (what was bound is released)
     */
    static Links between(ChaosNodes nodes) throws IOException {
        Links links = new Links(nodes);
        try {
            for (int i = 0; i < ChaosNodes.N; i++) {
                for (int j = 0; j < ChaosNodes.N; j++) {
                    if (i != j) {
                        links.proxies[i][j] =
                                LinkProxy.open(
                                        nodes.id(i) + "->" + nodes.id(j),
                                        new InetSocketAddress(
                                                ChaosNodes.ip(i, j), nodes.raftPort(j)),
                                        new InetSocketAddress(
                                                ChaosNodes.ip(j, j), nodes.raftPort(j)));
                    }
                }
            }
        } catch (IOException e) {
            links.close();
            throw e;
        }
        return links;
    }

    /** Cuts the links from i to j of every pair given as {i, j}. */
    void cut(List<int[]> pairs, LinkProxy.Cut how) {
        for (int[] p : pairs) {
            proxies[p[0]][p[1]].cut(how);
        }
    }

    /** Heals every link. */
    void healAll() {
        each(LinkProxy::heal);
    }

    /** Bytes carried on the connections replica i opened. */
    long bytesFrom(int i) {
        long n = 0;
        for (int j = 0; j < ChaosNodes.N; j++) {
            n += i == j ? 0 : proxies[i][j].bytes();
        }
        return n;
    }

    /** Bytes carried on the connections opened to replica j. */
    long bytesTo(int j) {
        long n = 0;
        for (int i = 0; i < ChaosNodes.N; i++) {
            n += i == j ? 0 : proxies[i][j].bytes();
        }
        return n;
    }

    /**
     * The replicas whose Raft traffic did not all go through the proxies as it should: none carried
     * on the connections it opened or on those opened to it. Every replica opens some (appends as
     * leader, or writes its Raft client routes to the leader) and takes some.
     */
    List<String> bypassed() {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < ChaosNodes.N; i++) {
            if (bytesFrom(i) == 0 || bytesTo(i) == 0) {
                out.add(
                        nodes.id(i)
                                + " ("
                                + bytesFrom(i)
                                + " bytes proxied from it, "
                                + bytesTo(i)
                                + " to it)");
            }
        }
        return out;
    }

    /** Per link: kilobytes carried and connections forwarded. */
    String counts() {
        List<String> out = new ArrayList<>();
        each(p -> out.add(p.name() + " " + p.bytes() / 1024 + " KiB/" + p.connections() + "c"));
        return String.join(", ", out);
    }

    private void each(Consumer<LinkProxy> f) {
        for (LinkProxy[] row : proxies) {
            for (LinkProxy p : row) {
                if (p != null) {
                    f.accept(p);
                }
            }
        }
    }

    @Override
    public void close() {
        each(LinkProxy::close);
    }
}

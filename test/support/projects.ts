/**
 * A second project beside `default`, with a full token, made by SQL (as
 * `dispatch project create` and `dispatch token create --project` will), and
 * an API client that calls with that token.
 */
import { beforeAll } from "vitest";
import { tokenDigest } from "../../src/domain/access-tokens/access-tokens";
import { type ApiResponse, request, type TestService } from "./service";

/** A project of the test file's Dispatch and a client calling its API with the project's token. */
export interface TestProject {
  name: string;
  token: string;
  api(path: string, init?: RequestInit): Promise<ApiResponse>;
}

/** Makes project `name` with a full token in `dispatch`'s database before the file's tests. */
export function useProject(dispatch: TestService, name: string): TestProject {
  const token = `${name}-token-0123456789abcdef`;
  beforeAll(async () => {
    const sql = dispatch.service.sql;
    await sql`insert into dispatch.projects (name) values (${name})`;
    await sql`
      insert into dispatch.access_tokens (name, project, digest, read_only) values (${`${name}-ci`}, ${name}, ${tokenDigest(token)}, false)`;
  });
  return {
    name,
    token,
    api: (path, init = {}) =>
      request(`${dispatch.baseUrl}${path}`, {
        ...init,
        headers: { Authorization: `Bearer ${token}`, ...(init.headers as Record<string, string>) },
      }),
  };
}

/** The signed-in person, as the pages need them. */
export interface Viewer {
  name: string;
  fullname: string;
  avatarUrl: string | null;
  orgs: string[];
}

export type RepoKind = "model" | "dataset" | "space";

// A team's first hour through gitbeaker: each step's result goes into one JSON document on stdout,
// which tests/v4/test_gitbeaker.py checks. A step that throws records its status and message
// instead, so one failure does not hide the others.
const { Gitlab } = await import(process.env.GITBEAKER_ENTRY);

const host = process.env.CODEYARD_URL;
const user = new Gitlab({ host, token: process.env.USER_TOKEN });
const admin = new Gitlab({ host, token: process.env.ADMIN_TOKEN });
const results = {};

async function step(name, work) {
  try {
    results[name] = { ok: true, value: await work() };
  } catch (error) {
    results[name] = { ok: false, status: error.cause?.response?.status ?? null, message: String(error.message) };
  }
  return results[name].ok ? results[name].value : undefined;
}

const me = await step("current_user", async () => (await user.Users.showCurrentUser()).username);
const project = await step("create_project", () => user.Projects.create({ name: "beaker", initializeWithReadme: true }));
const id = project?.id;
const path = `${me}/beaker`;
await step("show_by_path", async () => (await user.Projects.show(path)).id);
await step("create_branch", async () => (await user.Branches.create(id, "feature", "main")).name);
await step("protect", async () => {
  const found = await user.ProtectedBranches.protect(id, "release/*", { pushAccessLevel: 0, mergeAccessLevel: 40 });
  return { name: found.name, push: found.push_access_levels.map((level) => level.access_level) };
});
await step("create_file", async () => (await user.RepositoryFiles.create(id, "dir/a.txt", "feature", "hello\n", "Add a")).file_path);
await step("show_file", async () => {
  const file = await user.RepositoryFiles.show(id, "dir/a.txt", "feature");
  return Buffer.from(file.content, "base64").toString();
});
await step("edit_file", async () => (await user.RepositoryFiles.edit(id, "dir/a.txt", "feature", "hello again\n", "Edit a")).file_path);
await step("tag", async () => (await user.Tags.create(id, "v1.0", "main")).name);
const mr = await step("open_merge_request", () => user.MergeRequests.create(id, "feature", "main", "Add a"));
await step("merge_status", async () => {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const shown = await user.MergeRequests.show(id, mr.iid);
    if (shown.merge_status !== "checking" && shown.merge_status !== "unchecked") return shown.detailed_merge_status;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return "still checking";
});
await step("merge", async () => {
  const merged = await user.MergeRequests.accept(id, mr.iid, { shouldRemoveSourceBranch: true, sha: mr.sha });
  return { state: merged.state, merge_commit_sha: merged.merge_commit_sha };
});
await step("remove_file", async () => {
  await user.RepositoryFiles.remove(id, "dir/a.txt", "main", "Remove a");
  return true;
});
await step("branches_after", async () => (await user.Branches.all(id)).map((branch) => branch.name).sort());
await step("keyset_projects", async () => (await admin.Projects.all({ perPage: 1, maxPages: 5 })).map((found) => found.id));
await step("offset_users", async () => (await admin.Users.all({ perPage: 1, maxPages: 3 })).length);
await step("edit_user_multipart", async () => {
  const edited = await admin.Users.edit(project.owner.id, { bio: "edited through gitbeaker" });
  return edited.bio;
});
await step("not_found", () => user.Projects.show("nobody/nothing"));

process.stdout.write(JSON.stringify(results));
